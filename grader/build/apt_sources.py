"""Which Debian mirror this machine's apt uses: the debootstrap base is made from the same one.

Reads deb822 ``*.sources`` files first (bookworm's default), then the one-line ``sources.list``.
"""

from __future__ import annotations

from pathlib import Path

SUITE = "bookworm"
DEFAULT_MIRROR = "http://deb.debian.org/debian"


def _deb822_paragraphs(text: str) -> list[dict[str, str]]:
    paras: list[dict[str, str]] = []
    cur: dict[str, str] = {}
    key = None
    for raw in text.splitlines():
        if raw.startswith("#"):
            continue
        if not raw.strip():
            if cur:
                paras.append(cur)
            cur, key = {}, None
            continue
        if raw[0] in " \t" and key is not None:
            cur[key] += " " + raw.strip()
            continue
        if ":" in raw:
            key, _, value = raw.partition(":")
            key = key.strip().lower()
            cur[key] = value.strip()
    if cur:
        paras.append(cur)
    return paras


def apt_mirror(
    sources_dir: Path = Path("/etc/apt/sources.list.d"),
    sources_list: Path = Path("/etc/apt/sources.list"),
    suite: str = SUITE,
) -> str:
    """The apt mirror this machine uses for ``suite`` (deb822 ``*.sources`` first, then sources.list).

    Falls back to ``http://deb.debian.org/debian``.
    """
    sources = sorted(Path(sources_dir).glob("*.sources")) if Path(sources_dir).is_dir() else []
    for f in sources:
        try:
            text = f.read_text()
        except OSError:
            continue
        for p in _deb822_paragraphs(text):
            if p.get("enabled", "yes").lower() == "no":
                continue
            if "deb" not in p.get("types", "").split():
                continue
            if suite not in p.get("suites", "").split():
                continue
            uris = p.get("uris", "").split()
            if uris:
                return uris[0].rstrip("/")
    try:
        lines = Path(sources_list).read_text().splitlines()
    except OSError:
        lines = []
    for raw in lines:
        words = raw.split("#", 1)[0].split()
        if not words or words[0] != "deb":
            continue
        words = words[1:]
        if words and words[0].startswith("["):  # [arch=amd64 signed-by=...]
            while words and not words[0].endswith("]"):
                words = words[1:]
            words = words[1:]
        if len(words) >= 2 and words[1] == suite:
            return words[0].rstrip("/")
    return DEFAULT_MIRROR
