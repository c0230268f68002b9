"""Escaping and truncation for every medium we write untrusted text into.

Untrusted text is anything a user, an agent or a server chose: prompts, agent output, judge
reasons, gate names, error sentences. Before it reaches Markdown (job summary, PR/MR comment),
XML (JUnit), a GitHub workflow command or a dotenv file it goes through one of these helpers.

Rules kept here:
- Markdown: backslash-escape Markdown punctuation, HTML-escape ``<``, ``>`` and ``&``, break
  ``@mentions`` and cross-references with a zero-width space so nobody is pinged and nothing
  is linked or cross-referenced (GitHub: ``#12``, ``GH-77``, ``owner/repo#12``, github.com
  URLs; GitLab: ``!123``, ``%v1``, ``&45``, ``~label``, ``$snippet``), and put a whole value on one
  line when it goes into a table cell.
- Quick actions: no untrusted line can start a GitLab quick action or end the code fence,
  HTML block or ``>>>`` quote that hides one (:func:`md_fence`, :func:`no_quick_actions`).
- Truncation never cuts a character in two: by characters (the comment cap) or by UTF-8
  bytes (the 1 MiB summary cap), preferring a line boundary, always with a visible note.
"""

from __future__ import annotations

import re

ZWSP = "\u200b"  # zero-width space: breaks @mentions without changing what a reader sees
# A word joiner breaks a price's "$" from its digits (GitLab reads "$123" as a snippet) just as
# well, and keeps a line from wrapping between them ("$" at one line's end, "19.99" on the next).
WJ = "\u2060"
ELLIPSIS = "…"

# CommonMark lets any ASCII punctuation be backslash-escaped; these are the ones that can
# start emphasis, code spans, links, images, table breaks or (GitHub) math anywhere in a line.
_MD_SPECIAL = frozenset("\\`*_[]|~$")
# ...and these only matter at the start of a line (headings, lists, quotes, setext rules).
_MD_LINE_START = re.compile(r"^(?:[#+\-=>]|\d+[.)])")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}
# Reference sigils of GitHub and GitLab, each followed by what can start a reference: a zero-
# width space after the sigil keeps the text and breaks the reference. (``&`` is already
# ``&amp;`` here, ``"`` is ``&quot;``.)
_SIGIL_REF = re.compile(
    r"(@)(?=[A-Za-z0-9])|(#|!|&amp;|\\\$)(?=\d)|(%|\\~)(?=[A-Za-z0-9]|&quot;)"
)
# A line that opens with punctuation (after blanks) could open or close a code fence, an HTML
# block or a ``>>>`` quote, or be a GitLab quick action (``/approve``): in untrusted
# multi-line text such a line gets a leading zero-width space, so GitLab's quick-action
# extraction never sees it as a command or as the end of what hides commands.
_LINE_OPENER = re.compile(r"^(?=[ \t]*[^\w\s\u200b])", re.M)
# Our own lines never open with ``/``: any line of a note that does came from untrusted text.
_SLASH_LINE = re.compile(r"^(?=[ \t]*/)", re.M)
_GH_DASH_REF = re.compile(r"(?i)\b(gh-)(?=\d)")
# A github.com URL (issue, pull request, commit...) would be linked, shown as a reference and
# add a "mentioned this" event to the target: the scheme, ``www.`` and the host are broken.
_GITHUB_URL = re.compile(r"(?i)(https?:)?(//)?(www)?(\.?github\.com)(?=/)")
_WS = re.compile(r"\s+")
# Bidirectional embedding/override/isolate controls (U+202A-U+202E, U+2066-U+2069) and the
# marks U+200E/U+200F/U+061C: they can make a reader see text in another order.
BIDI = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")
# GitHub's autolink extension links bare ``scheme://`` and ``www.`` text: a zero-width space
# before the ``:`` (or after ``www``) keeps untrusted text from becoming a live link.
_BARE_SCHEME = re.compile(r"(?i)(?<![A-Za-z0-9])([a-z][a-z0-9+.\-]{1,15})(?=://)")
_BARE_WWW = re.compile(r"(?i)(?<![A-Za-z0-9])(www)(?=\.)")
# Characters XML 1.0 forbids (C0 controls except tab/newline/CR, surrogates, U+FFFE/U+FFFF).
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# GitHub workflow commands: ``##[name ...]`` anywhere in a line, ``::name::`` at a line start
# after leading whitespace (.NET ``TrimStart``: Unicode spaces too); lines break at CR or LF.
_GH_LEGACY = re.compile(r"##\[")
_GH_LINE = re.compile(r"([\r\n])(\s*)::")


def one_line(text: object) -> str:
    """Collapse every run of whitespace (newlines included) into one space."""
    return _WS.sub(" ", str(text)).strip()


def excerpt(text: object, limit: int) -> str:
    """``text`` on one line, cut to at most ``limit`` characters with a trailing ellipsis."""
    flat = one_line(text)
    if limit <= 0:
        return ""
    if len(flat) <= limit:
        return flat
    return flat[: max(limit - 1, 0)].rstrip() + ELLIPSIS


def md_html(text: object) -> str:
    """HTML-escape ``& < > "`` (for text inside HTML blocks such as ``<details>``)."""
    return "".join(_HTML.get(ch, ch) for ch in BIDI.sub("", str(text)))


def md_fence(text: object, info: str = "text") -> list[str]:
    """Untrusted multi-line text as a fenced code block nothing inside can close.

    Shown literally by GitHub (no HTML, links, mentions or Markdown); bidi and control
    characters are dropped so the lines read in the order they were written.
    """
    body = BIDI.sub("", _CONTROL.sub("", str(text).replace("\r\n", "\n")))
    body = _LINE_OPENER.sub(ZWSP, body)
    longest = max((len(m) for m in re.findall(r"`{3,}|~{3,}", body)), default=2)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{info}", *body.rstrip("\n").split("\n"), fence]


def no_quick_actions(markdown: str) -> str:
    """A whole comment or note in which no line can run a GitLab quick action: a line that
    opens with ``/`` gets a leading zero-width space (a safety net under :func:`md_fence`,
    whatever HTML blocks, fences or quotes precede the line)."""
    return _SLASH_LINE.sub(ZWSP, markdown)


def md_text(text: object, *, line_start: bool = False) -> str:
    """Escape untrusted text for inline Markdown (newlines become spaces).

    The result renders as the literal text: no emphasis, code spans, links, images, HTML,
    table breaks, mentions or issue references. With ``line_start`` (the text opens a line,
    a list item or a quote) a leading ``#``, ``-``, ``+``, ``=`` or ``1.`` is escaped too.
    """
    flat = BIDI.sub("", _CONTROL.sub("", one_line(text)))
    out: list[str] = []
    for ch in flat:
        if ch in _HTML:
            out.append(_HTML[ch])
        elif ch in _MD_SPECIAL:
            out.append("\\" + ch)
        else:
            out.append(ch)
    escaped = "".join(out)
    m = _MD_LINE_START.match(escaped) if line_start else None
    if m:
        escaped = escaped[: m.end() - 1] + "\\" + escaped[m.end() - 1 :]
    escaped = no_references(escaped)  # github.com URLs first: then no bare link is left there
    return _BARE_WWW.sub(r"\1" + ZWSP, _BARE_SCHEME.sub(r"\1" + ZWSP, escaped))


_URL = re.compile(r"(?i)\bhttps?://[^\s`<>]+")


def md_message(text: object) -> str:
    """An error or notice line for inline Markdown: like :func:`md_text`, but an http(s) URL
    in it is a code span, so it is never a live link and copies without any invisible
    character inside it (:func:`md_text` breaks a bare scheme with a zero-width space)."""
    flat = BIDI.sub("", _CONTROL.sub("", one_line(text)))
    out: list[str] = []
    start = 0
    for m in _URL.finditer(flat):
        url = m.group(0).rstrip(".,;:)?!'\"")
        out += [_spaced(flat[start:m.start()]), f"`{url}`"]
        start = m.start() + len(url)
    out.append(_spaced(flat[start:]))
    return "".join(out).strip()


def _spaced(part: str) -> str:
    """:func:`md_text` of a piece of a line, keeping the blank at either end."""
    if not part.strip():
        return part
    return ((" " if part[0] == " " else "") + md_text(part)
            + (" " if part[-1] == " " else ""))


def no_references(escaped: str) -> str:
    """Already-escaped Markdown with every mention and cross-reference broken by a zero-width
    space, or a word joiner after a "$" (what a reader sees is unchanged)."""
    escaped = _GITHUB_URL.sub(_break_github_url, escaped)
    escaped = _GH_DASH_REF.sub(lambda m: m.group(1) + ZWSP, escaped)
    return _SIGIL_REF.sub(_break_sigil, escaped)


def _break_sigil(m: re.Match[str]) -> str:
    return m.group(0) + (WJ if m.group(0) == "\\$" else ZWSP)


def _break_github_url(m: re.Match[str]) -> str:
    return ZWSP.join(part for part in m.groups() if part) + ZWSP


def md_cell(text: object, limit: int | None = None) -> str:
    """Escape untrusted text for one Markdown table cell, optionally shortened first.

    The cut happens before escaping, so an escape sequence is never split. An empty value
    becomes a dash so the table keeps its shape.
    """
    raw = excerpt(text, limit) if limit is not None else one_line(text)
    return md_text(raw) if raw else "—"


def md_link(label: object, url: str) -> str:
    """A Markdown link with an escaped label; only http(s) URLs become links."""
    if not re.match(r"^https?://[^\s<>()\"']+$", url or ""):
        return md_text(label)
    return f"[{md_text(label)}]({url})"


def md_code(text: object, limit: int | None = None, *, in_table: bool = False) -> str:
    """Untrusted text as an inline code span that nothing inside can close.

    In a GFM table a ``|`` splits the cell even inside a code span, so ``in_table`` escapes it.
    """
    raw = excerpt(text, limit) if limit is not None else one_line(text)
    raw = BIDI.sub("", _CONTROL.sub("", raw))
    if not raw:
        return "—"
    longest = max((len(m) for m in re.findall(r"`+", raw)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if raw.startswith("`") or raw.endswith("`") else ""
    if in_table:
        raw = raw.replace("|", "\\|")
    return f"{fence}{pad}{raw}{pad}{fence}"


# ---------------------------------------------------------------------------- truncation


def _cut_at_line(text: str, end: int) -> str:
    """``text[:end]`` backed off to the last newline when one is reasonably close."""
    head = text[:end]
    nl = head.rfind("\n")
    if nl >= end // 2:
        return head[: nl + 1]
    # No useful line boundary: never leave a half HTML entity or a dangling backslash.
    amp = head.rfind("&")
    if amp != -1 and ";" not in head[amp:]:
        head = head[:amp]
    while head.endswith("\\"):
        head = head[:-1]
    return head


def truncate_chars(text: str, limit: int, note: str) -> str:
    """``text`` if it fits in ``limit`` characters, else a cut copy ending with ``note``.

    Python strings hold whole code points, so a character cut here is never split.
    """
    if len(text) <= limit:
        return text
    room = limit - len(note)
    if room <= 0:
        return note[:limit]
    return _cut_at_line(text, room) + note


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def truncate_bytes(text: str, limit: int, note: str) -> str:
    """``text`` if its UTF-8 form fits in ``limit`` bytes, else a cut copy ending with ``note``.

    The cut lands on a character boundary (never inside a multi-byte UTF-8 sequence).
    """
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    room = limit - utf8_len(note)
    if room <= 0:
        return ""
    cut = room
    # Back off over UTF-8 continuation bytes (0b10xxxxxx) to the start of a character.
    while cut > 0 and (data[cut] & 0xC0) == 0x80:
        cut -= 1
    head = data[:cut].decode("utf-8", "surrogatepass")
    return _cut_at_line(head, len(head)) + note


# ------------------------------------------------------------------ other media


def xml_text(text: object) -> str:
    """Drop characters that XML 1.0 cannot carry at all (ElementTree escapes the rest)."""
    return _XML_ILLEGAL.sub("", str(text))


def scrub_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD, so it can be encoded as UTF-8
    (a server's ``"\\ud800"`` decodes to one)."""
    return _SURROGATE.sub("\ufffd", text)


def gh_inert(text: str, *, line_start: bool = True) -> str:
    """Untrusted text that the GitHub runner cannot read as a workflow command: ``##[``
    anywhere and a leading ``::`` on any line get a zero-width space (the runner's
    ``TrimStart`` does not remove it). ``line_start``: ``text`` opens a line."""
    text = _GH_LEGACY.sub("##" + ZWSP + "[", text)
    lead = "\n" if line_start else ""
    fixed = _GH_LINE.sub(lambda m: m.group(1) + m.group(2) + ZWSP + "::", lead + text)
    return fixed[len(lead):]


def gh_data(text: object) -> str:
    """Escape the message part of a GitHub workflow command (``::cmd::<data>``)."""
    return str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def gh_property(text: object) -> str:
    """Escape a property value of a GitHub workflow command (``::cmd key=<value>::``)."""
    return gh_data(text).replace(":", "%3A").replace(",", "%2C")


def dotenv_value(text: object, limit: int = 1000) -> str:
    """One line, no control characters, at most ``limit`` characters (dotenv reports)."""
    return excerpt(_CONTROL.sub(" ", str(text)), limit)
