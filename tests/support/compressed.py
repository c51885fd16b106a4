"""Opening fixture files that may be gzip- or xz-compressed or plain, chosen by the file's own magic
bytes (the fixtures are xz; traces tests make are often gzip), for the Python test scripts."""
import gzip
import lzma
import os


def _kind_of_head(head):
    if head[:2] == b"\x1f\x8b":
        return "gzip"
    if head[:6] == b"\xfd7zXZ\x00":
        return "xz"
    return "plain"


def kind_of(path):
    with open(path, "rb") as f:
        return _kind_of_head(f.read(6))


def open_any(path, mode="rb", **kwargs):
    """open() for plain, gzip and xz files alike ('rt' mode takes encoding=...)."""
    kind = kind_of(path)
    if kind == "gzip":
        return gzip.open(path, mode, **kwargs)
    if kind == "xz":
        return lzma.open(path, mode, **kwargs)
    return open(path, mode, **kwargs)


def decompress_any(data):
    """The content of bytes that may be gzip, xz or plain."""
    kind = _kind_of_head(data)
    if kind == "gzip":
        return gzip.decompress(data)
    if kind == "xz":
        return lzma.decompress(data)
    return data


COMPRESSED_SUFFIXES = (".gz", ".xz")


def strip_compression(name):
    """'x.sqlite.xz' -> 'x.sqlite'."""
    for suffix in COMPRESSED_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def gold_text(path):
    """A fixture's text by its plain name: the file, else its .xz or .gz (nsys gold files over 4 kB
    are kept xz-compressed)."""
    for candidate in (str(path), str(path) + ".xz", str(path) + ".gz"):
        if os.path.exists(candidate):
            with open_any(candidate, "rt", encoding="utf-8", newline="") as f:
                return f.read()
    raise FileNotFoundError(str(path))
