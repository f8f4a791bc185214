#!/usr/bin/env python3
"""Seed inputs for the `timing_decoder` fuzz target: every gateway field, in every place
the decoder reads it from, holding every kind of JSON value.

usage: fuzz/seed_jsonl_values.py DIR

The row check decides per (where the key is, the field's kind, the value's JSON type) whether
a row is good, which fault it has and how it is repaired; random mutation at a few inputs a
second reaches the rarer of these combinations slowly. Each file is two lines, a good row and
the row under test, so polars also sees the odd value next to a normal one in one column.
The keys (gateway fields and content columns) come from fuzz/timing_decoder.dict (a test
keeps its gateway fields complete). Then rows that disagree: one key of each kind, in each
place, holding one JSON type in the first row and another in the second (polars reads one
type per column, from the schema the row check finds), and `other` an object in one row and
a JSON string in the next; and `other` and `timing` themselves holding every JSON value,
alone and in two rows that disagree; the first lines that format sniffing reads; an Azure
RequestResponse log with each of its fields holding each value; and the small variations
where long runs kept finding single edges (`tails`, `line_ends`, `container_pairs`,
`not_utf8`, `unrolled_loops`, `azure_lengths`). Written by fuzz/seeds.py (content-hash
names).
"""

import json
import os
import re

from seeds import write_all

HERE = os.path.dirname(os.path.abspath(__file__))

VALUES = ["1", "0", "-1", "1.5", "1e308", "18446744073709551616", "-9223372036854775809",
          '"12"', '"abc"', '"NaN"', '""', "true", "null", "{}", "[]", "[1]"]

# Integers beyond 64 bits and whole floats beyond i64, bare and inside containers, where the
# row check tells an integer literal polars would read as Int128 from a float.
BIG = ["9223372036854775807", "9223372036854775808", "00009223372036854775808", "1e19", "1E+19",
       "-1e19", "12345678901234567890.0", '"18446744073709551616"', "[18446744073709551616]",
       "[[18446744073709551616]]", '{"a": 18446744073709551616}', "[1e19]", '{"a": [1e19]}',
       '{"a": {"b": 1e19}}']
BIG_ROWS = ['{{"extra": {v}}}', '{{"total_handler_ms": {v}}}', '{{"other": {{"extra": {v}}}}}',
            '{{"other": {{"timing": {{"total_handler_ms": {v}}}}}}}']
# The same inside `other` as a JSON string (the text of the string).
BIG_IN_STRING = ['{{"extra": {v}}}', '{{"timing": {{"total_handler_ms": {v}}}}}']
# Lines of whitespace alone (blank or not, as Rust's `is_ascii_whitespace` says: `\x0b` is
# not), and a CRLF file with an empty line.
BLANK = [" ", "\t", "\x0b", "\x0c", "\r", " \r"]

# A good row to put next to the row under test (`tails` and the generators after it).
GOOD_ROW = '{"request_id": "r", "total_handler_ms": 1500, "first_response_ms": 400}'

# One key per kind (time point, label, flag, count, code, timestamp, content, unknown) and
# one value per JSON type, for rows that disagree with each other.
KIND_KEYS = ["first_response_ms", "request_id", "is_stream", "output_tokens", "status",
             "timestamp", "prompt", "x_unknown"]
PAIR_VALUES = ["1", "1.5", '"12"', '""', "true", "null", "[1]", '{"a": 1}']


def fields():
    with open(os.path.join(HERE, "timing_decoder.dict")) as f:
        keys = re.findall(r'^"\\"([a-z_]+)\\":"$', f.read(), re.M)
    return [k for k in keys if k not in ("other", "timing")]


def placements(key, value):
    yield f'{{"{key}": {value}}}'
    yield f'{{"{key.upper()}": {value}}}'
    yield f'{{"{key}": {value}, "{key}": 1}}'
    yield f'{{"other": {{"{key}": {value}}}}}'
    yield f'{{"timing": {{"{key}": {value}}}}}'
    yield f'{{"other": {{"timing": {{"{key}": {value}}}}}}}'
    yield json.dumps({"other": f'{{"timing": {{"{key}": {value}}}}}'})


def other_string(key, value):
    return json.dumps({"other": f'{{"timing": {{"{key}": {value}}}}}'})


def disagreeing_rows():
    """Two rows per file: the same key in the same place (or `other` as an object, then as a
    string) holding two JSON types."""
    place = [lambda k, v: f'{{"{k}": {v}}}',
             lambda k, v: f'{{"other": {{"timing": {{"{k}": {v}}}}}}}',
             lambda k, v: f'{{"timing": {{"{k}": {v}}}}}',
             other_string]
    for key in KIND_KEYS:
        for a in PAIR_VALUES:
            for b in PAIR_VALUES:
                for p in place:
                    yield f"{p(key, a)}\n{p(key, b)}\n"
                yield f"{place[1](key, a)}\n{other_string(key, b)}\n"


# What `other` and `timing` may hold: objects with and without a timing field, JSON strings
# of one (blank too), and every value that is not an object.
NESTED_VALUES = ['{"timing": {"first_response_ms": 5}}', '{}', '{"timing": null}',
                 json.dumps('{"timing": {"first_response_ms": 5}}'), '""', '" "', '"{}"',
                 "null", "1", "-1", "1.5", "true", "[]", '[{"timing": 1}]']


def nested_values():
    """`other`, `timing` and `other.timing` holding each value, and two rows whose `other`
    (or `timing`) differ."""
    rows = [lambda v: f'{{"other": {v}}}', lambda v: f'{{"timing": {v}}}',
            lambda v: f'{{"other": {{"timing": {v}}}}}',
            lambda v: json.dumps({"other": f'{{"timing": {v}}}'})]
    for row in rows:
        for a in NESTED_VALUES:
            yield f'{{"request_id": "r1", "total_handler_ms": 9}}\n{row(a)}\n'
            for b in NESTED_VALUES:
                yield f"{row(a)}\n{row(b)}\n"


def every_place(key):
    """One timing field in every place the mapping looks (it reads the first and notes the
    others), and in each pair of them."""
    places = [f'"{key}": 1', f'"timing.{key}": 2', f'"other.timing.{key}": 3',
              f'"other": {{"timing": {{"{key}": 4}}}}', f'"timing": {{"{key}": 5}}']
    yield "{" + ", ".join(places) + "}\n"
    for i, a in enumerate(places):
        for b in places[i + 1:]:
            yield f"{{{a}, {b}}}\n"


def azure_lines():
    """The lines of the Azure RequestResponse sample log."""
    with open(os.path.join(HERE, "..", "fixtures", "azure", "requests", "mixed.jsonl")) as f:
        return f.read().splitlines()


def first_lines(good):
    """What the format sniffing reads: a byte-order mark, blank lines before the first row,
    and an Azure RequestResponse log (known by its first line, then read whole)."""
    azure = azure_lines()
    yield f"\ufeff{good}\n"
    yield f"\n \n{good}\n"
    yield f"\ufeff\n{good}\n"
    for n in (1, 3):
        text = "\n".join(azure[:n]) + "\n"
        yield text
        yield "\ufeff" + text
        yield "\n" + text + "{broken\n"


def azure_records():
    """The first two records of the Azure RequestResponse sample, as dictionaries."""
    return [json.loads(line) for line in azure_lines()[:2]]


# For `with_field`: leave the field out (None sets it to JSON null).
ABSENT = object()


def with_field(record, key, value):
    """A copy of an Azure record with `key` (`properties.NAME` for a field of its
    `properties`) set to `value`, or left out when `value` is ABSENT."""
    row = json.loads(json.dumps(record))
    target, name = (row["properties"], key[11:]) if key.startswith("properties.") else (row, key)
    if value is ABSENT:
        target.pop(name)
    else:
        target[name] = value
    return row


def azure_values():
    """The Azure RequestResponse reader (a `.jsonl` whose first line is one): each field of
    a record, and of its `properties`, holding each JSON value or left out, in the second
    line of the log; `properties` as a JSON string, as some exports write it."""
    first, second = azure_records()
    head = json.dumps(first) + "\n"
    for key in list(second) + [f"properties.{k}" for k in second["properties"]]:
        for value in VALUES + [None]:
            row = with_field(second, key, ABSENT if value is None else json.loads(value))
            yield head + json.dumps(row) + "\n"
    row = with_field(second, "properties", json.dumps(second["properties"]))
    yield head + json.dumps(row) + "\n"


def tails():
    """Where the seventh and eighth sessions' runs still found edges one at a time: the
    spellings of the Azure log's `category` and `streamType` (compared without case, and
    without `-`, `_` and spaces), blank lines at many places before a bad row (the line
    map's binary search), and containers mixing small and big numbers in each order."""
    first, second = azure_records()
    categories = ["RequestResponse", "requestresponse", "REQUESTRESPONSE", "RequestRespons",
                  "RequestResponsee", "Request", "", "Audit", "R\u00e9questResponse"]
    for c in categories:
        row = dict(first, category=c)
        yield json.dumps(row) + "\n" + json.dumps(second) + "\n"
        yield json.dumps(first) + "\n" + json.dumps(dict(second, category=c)) + "\n"
    streams = ["Streaming", "Non-Streaming", "non_streaming", "NON STREAMING", "nonstreaming",
               " streaming ", "Streaming-", "stream", "-", "", "Str\u00e9aming", "Non--Streaming",
               "non streaming x", "STREAMING_", "N", "\u30b9\u30c8\u30ea\u30fc\u30e0"]
    for v in streams:
        row = with_field(second, "properties.streamType", v)
        yield json.dumps(first) + "\n" + json.dumps(row) + "\n"
    good = GOOD_ROW
    bad = '{"request_id": "b", "total_handler_ms": "abc"}'
    for jumps in (1, 2, 3, 5, 8, 13, 21, 34):
        for every in (1, 2, 3):
            lines = []
            for i in range(jumps * every):
                lines.append(good)
                if i % every == 0:
                    lines.append("")
            yield "\n".join(lines + [bad, good, bad]) + "\n"
    small, big, maybe = "1", "18446744073709551616", "1e19"
    for a, b in [(small, big), (big, small), (small, maybe), (maybe, small), (maybe, big),
                 (big, maybe), (f"[{small}]", big), (f"[{maybe}]", small), (f"[{big}]", maybe)]:
        for row in BIG_ROWS:
            yield f"{good}\n" + row.format(v=f"[{a}, {b}]") + "\n"
            yield f"{good}\n" + row.format(v=f'{{"a": {a}, "b": {b}}}') + "\n"


# Characters of every UTF-8 width and whitespace class: ASCII whitespace (`\x0b` and `\x0c`
# are not JSON whitespace), a letter, the two-byte whitespace U+0085 and U+00A0 next to a
# two-byte letter, and the three-byte whitespace of each block Rust's `char::is_whitespace`
# tells apart (U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000) next to a
# non-whitespace character of the same block, a CJK letter, the byte-order mark, an emoji;
# and pairs, so that `trim` loops.
EDGE_CHARS = [" ", "\t", "\x0b", "\x0c", "\r", "x", "\u0085", "\u00a0", "\u00e9", "\u0100",
              "\u1680", "\u1681", "\u2000", "\u200a", "\u200b", "\u2028", "\u2029", "\u202f",
              "\u205f", "\u2060", "\u3000", "\u3001", "\u4e00", "\ufeff", "\U0001f600",
              " \u3000", "\u2028\u00a0", "\u3000\u3000", "\ufeff\ufeff",
              "\ufeff\u3000"]


def line_ends():
    """Where the seventh to ninth sessions' runs found edges one at a time: each character
    of EDGE_CHARS around the lines and strings the readers trim. `str::trim` is inlined into
    each caller and branches on the width of the character it decodes from either end and
    on its whitespace class, so each place needs each kind: the first line of an Azure
    RequestResponse log (format sniffing, then the reader's first line), a later line,
    `properties` as a JSON string, `durationMs` and `promptTokens` as strings, `streamType`
    (compared without `-`, `_` and spaces), a blank-looking line and a line that is a JSON
    string in a gateway log, and `other` as a JSON string, alone and next to a row whose
    `other` is an object."""
    first, second = azure_records()
    head, tail = json.dumps(first), json.dumps(second)
    good = GOOD_ROW
    for c in EDGE_CHARS:
        yield f"{c}{head}\n{tail}\n"
        yield f"{head}{c}\n{tail}\n"
        yield f"{c}\n{head}\n{tail}\n"
        yield f"{head}\n{c}{tail}{c}\n"
        yield f"{head}\n{c}\n{tail}\n"
        for key, value in [("properties", json.dumps(second["properties"])), ("durationMs", "12"),
                           ("properties.promptTokens", "7"), ("properties.streamType", "Stream")]:
            for v in (c, f"{c}{value}", f"{value}{c}", f"{value[:3]}{c}{value[3:]}"):
                yield f"{head}\n{json.dumps(with_field(second, key, v))}\n"
        yield f"{good}\n{c}\n{good}\n"
        yield f"{good}\n{json.dumps(c)}\n{good}\n"
        yield f"{c}{good}{c}\n{good}\n"
        for other in (c, f'{c}{{}}{c}', f'{c}{{"timing": {{"total_handler_ms": 1}}}}'):
            row = json.dumps({"request_id": "s", "other": other})
            yield f"{good}\n{row}\n"
            yield '{"request_id": "o", "other": {"x": 1}}\n' + row + "\n"


# One value of each shape the row check tells apart inside a container.
SHAPES = ["null", '"s"', "1", "1.5", "true", "1e19", "18446744073709551616", "{}", "[]",
          "[18446744073709551616]", "[1e19]", '{"a": 18446744073709551616}', '{"a": 1e19}']


def container_pairs():
    """A container's shape after each element depends on what it held before (nothing, a
    big integer, a maybe-big float) and on the element's shape: every such pair, in an
    array and in an object, under a timing field and under an unknown key."""
    good = GOOD_ROW
    for a in ["1", "18446744073709551616", "1e19", "[18446744073709551616]", "[1e19]"]:
        for b in SHAPES:
            for row in ['{{"extra": {v}}}', '{{"total_handler_ms": {v}}}']:
                yield f"{good}\n" + row.format(v=f"[{a}, {b}]") + "\n"
                yield f"{good}\n" + row.format(v=f'{{"a": {a}, "b": {b}}}') + "\n"


# Byte sequences that are not UTF-8: a stray continuation byte, 0xFF, a sequence of each
# length cut short, a surrogate, an overlong form, a code point beyond U+10FFFF.
NOT_UTF8 = [b"\xff", b"\x80", b"\xc3", b"\xe3\x80", b"\xf0\x9f\x98", b"\xed\xa0\x80",
            b"\xc0\xaf", b"\xf4\x90\x80\x80", b"\xe3\x80x"]


def not_utf8():
    """A row that is not UTF-8 is a bad row whose column counts the characters before the
    first bad byte: each sequence of NOT_UTF8 after characters of each UTF-8 width, in a
    value, in a key, at the start of the line and after the object, in the first line (what
    format sniffing reads) and in the second."""
    good = b'{"request_id": "r", "total_handler_ms": 1500}'
    for before in ["", "x", "\u00e9", "\u3000", "\U0001f600", "\u00e9\u3000\U0001f600"]:
        for bad in NOT_UTF8:
            b = before.encode() + bad
            for row in [b'{"request_id": "' + b + b'"}', b'{"' + b + b'": 1}', b + good,
                        good + b]:
                yield good + b"\n" + row + b"\n"
                yield row + b"\n" + good + b"\n"


def unrolled_loops():
    """Byte loops the compiler unrolls branch on where they stop: the case-blind compare of
    `category` (in format sniffing and in the reader) with the first difference at each
    position, and the blank-line test on runs of whitespace of each length, ending in a
    non-blank byte or not."""
    first, second = azure_records()
    category = first["category"]
    for i in range(len(category) + 1):
        for c in [category[:i] + "#" + category[i + 1:], category[:i].upper() + category[i:],
                  category[:i] + "#"]:
            yield json.dumps(dict(first, category=c)) + "\n" + json.dumps(second) + "\n"
            yield json.dumps(first) + "\n" + json.dumps(dict(second, category=c)) + "\n"
    good = '{"request_id": "r", "total_handler_ms": 1500}'
    for n in range(1, 20):
        for line in [" " * n, " \t\r"[n % 3] * n, " " * n + "x", " " * n + "\x0c",
                     " " * n + good]:
            yield f"{good}\n{line}\n{good}\n"
    # Per length, one file with the first non-blank byte at each position in turn.
    for n in range(1, 49):
        blank = "".join(" \t\r"[(i + n) % 3] for i in range(n))
        lines = [blank[:k] + "x" + blank[k + 1:] for k in range(n)] + [blank]
        yield "\n".join([good] + lines + [good]) + "\n"


def azure_lengths():
    """The Azure RequestResponse reader's loops over lengths: `streamType` spellings of
    every length up to 40 with a character of each UTF-8 width at either end, and longer
    ones of each mix (the filter decodes characters; the lower-casing runs over the bytes),
    and logs of 1 to 17 `RequestResponse` records, every second one without its optional
    fields (each column is collected from the records)."""
    first, second = azure_records()
    head = json.dumps(first)

    def with_stream_type(v):
        return f"{head}\n{json.dumps(with_field(second, 'properties.streamType', v))}\n"
    for n in range(1, 41):
        for c in ["s", "-", "\u00e9", "\u3000", "\U0001f600"]:
            for v in [c + "x" * (n - 1), "x" * (n - 1) + c, ("Non-Streaming" * 4)[:n]]:
                yield with_stream_type(v)
    # Longer, past the lower-casing's vector widths, each dropped character among others.
    for n in [47, 48, 49, 63, 64, 65, 95, 96, 97, 127, 128, 129, 255, 256, 257, 1000]:
        for cycle in ["x", "-", "_", " ", "\u00e9", "x-", "x_ ", "X-_ \u00e9\u3000\U0001f600"]:
            yield with_stream_type((cycle * n)[:n])
    bare = {k: v for k, v in second.items() if k in ("category", "operationName", "time")}
    for n in range(1, 18):
        rows = [second if i % 2 == 0 else bare for i in range(n)]
        yield head + "\n" + "".join(json.dumps(r) + "\n" for r in rows)


def main():
    good = '{"request_id": "r1", "status": 200, "total_handler_ms": 1500, "first_response_ms": 400}'
    files = [f"{good}\n{row}\n" for key in fields() for value in VALUES
             for row in placements(key, value)]
    files += [f"{good}\n{row.format(v=v)}\n" for v in BIG for row in BIG_ROWS]
    files += [f"{good}\n{json.dumps({'other': row.format(v=v)})}\n" for v in BIG
              for row in BIG_IN_STRING]
    files += [f"{good}\n{blank}\n{good}\n" for blank in BLANK]
    files.append(f"{good}\r\n\r\n{good}\r\n")
    files += disagreeing_rows()
    files += nested_values()
    files += first_lines(good)
    files += azure_values()
    files += tails()
    files += line_ends()
    files += container_pairs()
    files += not_utf8()
    files += unrolled_loops()
    files += azure_lengths()
    files += [text for key in ("first_response_ms", "total_handler_ms") for text in every_place(key)]
    write_all(files)


if __name__ == "__main__":
    main()
