"""Shared by the seed generators (fuzz/seed_*.py): write generated inputs into a corpus
directory as libFuzzer names its own files, by the SHA-1 of their content, so a file that
is already there (from an earlier run of the script, or found by the fuzzer) is not
written again."""

import hashlib
import os
import sys


def write_all(texts):
    """Write each text (or bytes, for input that is not UTF-8) to the directory given as the
    script's argument; report how many."""
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    written = 0
    for text in texts:
        data = text if isinstance(text, bytes) else text.encode()
        path = os.path.join(out, hashlib.sha1(data).hexdigest())
        if not os.path.exists(path):
            with open(path, "wb") as f:
                f.write(data)
            written += 1
    print(f"{written} files written to {out}")
