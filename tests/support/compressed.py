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


def _plain_cache_dir():
    import tempfile
    folder = os.environ.get("KERNSCOPE_TEST_CACHE") or os.path.join(
        tempfile.gettempdir(), f"kernscope-plain-traces-{os.getuid()}")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    return folder


def plain_copy(path):
    """The path of an uncompressed copy of a compressed trace (the path itself when it is plain).

    The test scripts run kernscope many times on the same fixture; each run would otherwise
    decompress the file again (0.3-0.5 s for the 3.5 MB Llama export, about a third of a short
    command's time). Copies live in one cache folder for every script of a test run
    (KERNSCOPE_TEST_CACHE, else a folder of the user's in the temporary directory), named by the
    file's absolute path, size and modification time, and are written under another name and
    renamed, so scripts running side by side never read a half-written copy. Reading .gz/.xz traces
    themselves is checked by the tests that name those files on purpose (compressed_file_test,
    the bad-input cases)."""
    import hashlib
    path = str(path)
    if kind_of(path) == "plain":
        return path
    st = os.stat(path)
    key = hashlib.sha1(f"{os.path.abspath(path)}\0{st.st_size}\0{st.st_mtime_ns}".encode()).hexdigest()[:16]
    name = f"{key}-{strip_compression(os.path.basename(path))}"
    folder = _plain_cache_dir()
    target = os.path.join(folder, name)
    if not os.path.exists(target):
        partial = f"{target}.{os.getpid()}.part"
        with open_any(path, "rb") as src, open(partial, "wb") as dst:
            while chunk := src.read(1 << 20):
                dst.write(chunk)
        os.replace(partial, target)
    return target
