#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""Doxygen INPUT_FILTER: read a luf header written with kernel-doc comments,
print it with Doxygen markup. Line numbers are kept (one output line per
input line), so Doxygen's warnings point at the real header line.

Usage: kdoc2dox.py <header>      (Doxygen appends the file name)
       kdoc2dox.py --strict <header>
       kdoc2dox.py --md <page.md>  (a Markdown page: see md_text())

What it does, comment by comment, outside function bodies only:

  /**  kernel-doc block   -> Doxygen block:
       "name() - summary"      -> "\\brief summary"
       "struct name - summary" -> "\\brief summary"
       "@a: text", "@a, @b: text" (also several on one line)
                               -> "\\param a text" (function comments);
                                  "\\c a: text" elsewhere
       "Return:" / "Returns:"  -> "\\return"
       "@name" in text         -> "\\p name"
       "%CONST" / "&struct x"  -> "\\c CONST" / "struct x"
       a paragraph of lines indented deeper than its comment
                               -> "\\verbatim" block (diagrams, tables);
                                  its lines lose the " * " prefix, which
                                  Doxygen would print inside the block
       "R1. text", "U2. text" (a numbered rule, a letter and a number)
                               -> a list item "- <b>R1.</b> text"; the
                                  next line of the comment's own indent
                                  starts a new paragraph, ending the list
  /*   plain block directly above a declaration (no blank line between):
       the same, as a Doxygen block. Without --strict only: kernel-doc
       proper reads only "/**" blocks, but luf documents its one-line
       helpers with a plain comment right above them, and that text is
       the documentation a reader gets.
  /*   block after code on the same line (a struct member, an enumerator,
       a #define): a "/**<" trailing Doxygen comment (without --strict).
  /*   the file's first block after the SPDX line, "luf/x.h - summary":
       the "\\file" comment.
  /**  kernel-doc block of a struct, union or enum: each "@member: text"
       is also appended, as a "/**<" comment, to the line that declares
       that member or enumerator (kernel-doc documents members in the
       block above; Doxygen wants them beside each member), and the
       "@member:" lines leave the block's own text (blank lines there), so
       the summary is the head line alone.
  /* clang-format off */ and /* clang-format on */ are transparent: a
       comment above one of them documents the declaration after it.

Everything else (SPDX lines, comments inside function bodies, text of
code) passes through unchanged.
"""
import re
import sys

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
# "name() - summary", "struct name - summary", "name - summary"
KDOC_HEAD = re.compile(r"^(?:(?:struct|union|enum|typedef)\s+)?(%s)(?:\(\))?\s+-\s+(.*)$" % IDENT)
FILE_HEAD = re.compile(r"^(?:luf/)?[\w/.-]+\.h\s+-\s+(.*)$")
# a parameter definition: "@a:" or "@a, @b:" (also "@...:")
# It starts a line or follows the end of a sentence ("... bytes. @b: ...");
# elsewhere "@b:" is prose ("merged with @src: union of ...").
PARAM_DEF = re.compile(r"(?:^\s*|(?<=[.;]\s))@(%s|\.\.\.)((?:\s*,\s*@(?:%s))*)\s*:(?=\s|$)"
                       % (IDENT, IDENT))
PARAM_REF = re.compile(r"(?<![\w\\])@(%s)" % IDENT)
RETURN = re.compile(r"(?<![\w\\])Returns?:(?=\s|$)")
# "R1. text": a numbered rule (luf_proc.h's reader and updater rules)
RULE = re.compile(r"^([A-Z][0-9]+)\.\s+(.*)$")
# A formatter directive, not documentation.
CLANG_FORMAT = re.compile(r"^/\*\s*clang-format\s+(?:on|off)\s*\*/$")


def scan(text):
    """Yield (kind, start, end) for comments and code outside strings.

    kind is "comment" or "code"; code pieces are what lies between
    comments (string and character literals included, skipped over)."""
    i, n, last = 0, len(text), 0
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            if last < i:
                yield "code", last, i
            yield "comment", i, j
            i = last = j
        else:
            i += 1
    if last < n:
        yield "code", last, n


def comment_lines(body):
    """Split a block comment's inside into (prefix, text) per line."""
    out = []
    for line in body.split("\n"):
        m = re.match(r"^(\s*\*(?!/)\s?|\s*)(.*)$", line)
        out.append([m.group(1), m.group(2)])
    return out


def inline_markup(s):
    s = PARAM_REF.sub(r"\\p \1", s)
    s = re.sub(r"(?<![\w%])%(" + IDENT + ")", r"\\c \1", s)
    s = re.sub(r"&((?:struct|union|enum)\s+" + IDENT + ")", r"\1", s)
    # A lone < or > is text, not an HTML tag (<luf/luf.h>, a -> b, x >= y).
    s = re.sub(r"([<>])", r"\\\1", s)
    # "#if" is text too (Doxygen would read "#word" as a link request).
    s = re.sub(r"#(?=\w)", r"\\#", s)
    return s


def convert(body, is_function, first, members=False):
    """Convert the text of one documentation block (between the opening
    marker and the closing */), keeping its number of lines. members: the
    block documents a struct, union or enum whose "@member:" lines
    annotate_members() has put beside the members: leave them out here."""
    lines = comment_lines(body)
    if members:
        # A member's description: its "@name:" line and the lines that
        # continue it (as member_docs() reads them).
        cur = False
        for pl in lines:
            t = pl[1].strip()
            if MEMBER_DEF.match(" * " + t):
                cur = True
            elif not (cur and t and not re.match(r"^[A-Z][a-z]+:", t)):
                cur = False
            if cur:
                pl[1] = ""
    # Where the text starts: a line's indentation relative to the block.
    texts = [t for _, t in lines if t.strip()]
    base = min((len(t) - len(t.lstrip()) for t in texts), default=0)
    out = []
    in_verb = False
    verb_indent = 0
    in_rules = False
    prev_blank = True
    seen_head = False
    for pre, t in lines:
        stripped = t.strip()
        indent = len(t) - len(t.lstrip())
        blank = not stripped
        if in_verb and (blank or indent <= base):
            out[-1][1] += " \\endverbatim"
            in_verb = False
        if not in_verb and not blank and indent > base + 1 and prev_blank and seen_head:
            out.append([pre, "\\verbatim " + t])
            in_verb = True
            verb_indent = indent
            prev_blank = False
            continue
        if in_verb:
            # Doxygen keeps a " * " prefix inside \verbatim: blank it out
            # (Doxygen then strips the prefix's width of spaces), and line
            # the text up with the block's first line, whose leading
            # spaces Doxygen drops.
            cut = min(verb_indent, indent)
            out.append([re.sub(r"\S", " ", pre), t[cut:]])
            continue
        rule = RULE.match(stripped) if seen_head and indent <= base + 1 else None
        if blank:
            in_rules = False
        elif in_rules and not rule and indent <= base + 1:
            # The line after a list of rules starts a new paragraph.
            pre = pre + "<p>"
            in_rules = False
        if rule:
            out.append([pre, "- <b>%s.</b> " % rule.group(1) + inline_markup(rule.group(2))])
            in_rules = True
            prev_blank = False
            continue
        if not seen_head and not blank:
            seen_head = True
            m = FILE_HEAD.match(stripped) if first else None
            m = m or KDOC_HEAD.match(stripped)
            if m:
                # The head line: a summary, never parameters.
                out.append([pre, "\\brief " + inline_markup(m.groups()[-1])])
                prev_blank = False
                continue
        # "@a: x. @b: y" -> one section per parameter.
        def param(m):
            names = [m.group(1)] + re.findall(IDENT, m.group(2))
            if is_function:
                return "\n\\param " + ",".join(names)
            return "\n\\c " + ", ".join(names) + ":"
        pieces = []
        pos = 0
        for m in list(PARAM_DEF.finditer(t)) + [None]:
            chunk = t[pos:m.start() if m else len(t)]
            if m:
                chunk = chunk.rstrip()
            pieces.append(inline_markup(chunk))
            if m:
                pieces.append(param(m))
                pos = m.end()
        t = "".join(pieces)
        t = RETURN.sub("\n\\\\return", t)
        # Keep the line count: sections start on the same physical line,
        # separated by a Doxygen command that closes the previous one.
        t = t.lstrip("\n").replace("\n", " ")
        out.append([pre, t])
        prev_blank = blank
    if in_verb and out:
        out[-1][1] += " \\endverbatim"
    return "\n".join(p + t for p, t in out)


def next_decl(code_after):
    """The declaration that follows a comment, if it starts on the next
    line: returns (text up to ; or {, is_function) or (None, False)."""
    m = re.match(r"[ \t]*\n([ \t]*)(\S.*)", code_after, re.S)
    if not m:
        return None, False
    rest = m.group(2)
    if rest.startswith("#") and not rest.startswith("#define"):
        return None, False
    if rest.startswith("#define"):
        head = rest.split("\n", 1)[0]
        return head, "(" in head.split()[1] if len(head.split()) > 1 else False
    end = re.search(r"[;{]", rest)
    head = rest[: end.start() if end else len(rest)]
    is_fn = "(" in head and not re.match(r"\s*(struct|union|enum)\b[^(]*\{?$", head)
    return head, is_fn


AGG_DOC = re.compile(r"/\*\*(?!<)(.*?)\*/[ \t]*\n[ \t]*(?:struct|union|enum)\s+%s\s*\{" % IDENT, re.S)
MEMBER_DEF = re.compile(r"^\s*\*\s?\s*@(%s)\s*:\s*(.*)$" % IDENT)


def member_docs(block):
    """{member: text} from the "@member: text" lines of a kernel-doc block
    (a description runs on over the following lines until the next
    "@name:", a blank line or a section such as "Return:")."""
    docs, cur = {}, None
    for line in block.split("\n"):
        m = MEMBER_DEF.match(line)
        body = re.sub(r"^\s*\*\s?", "", line).strip()
        if m:
            cur = m.group(1)
            docs[cur] = m.group(2).strip()
        elif cur and body and not re.match(r"^[A-Z][a-z]+:", body):
            docs[cur] += " " + body
        else:
            cur = None
    return docs


def annotate_members(text):
    """Append each documented member's text to its declaring line (see the
    module comment); the line count does not change."""
    out, pos = [], 0
    for m in AGG_DOC.finditer(text):
        docs = member_docs(m.group(1))
        start = m.end()  # just after "{"
        depth, i = 1, start
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        body = text[start:i]
        lines = body.split("\n")
        fnptr = None  # a function-pointer member whose declaration goes on
        for n, line in enumerate(lines):
            if "/*" in line or "#" in line.lstrip()[:1]:
                continue
            f = re.search(r"\(\s*\*\s*(%s)\s*\)\s*\(" % IDENT, line)
            if f:
                fnptr = f.group(1)
            if fnptr:
                if line.rstrip().endswith(";"):
                    if fnptr in docs:
                        lines[n] = line + " /**< " + inline_markup(docs[fnptr]) + " */"
                    fnptr = None
                continue
            d = re.search(r"(%s)\s*(\[[^\]]*\])?\s*[;,]?\s*(=[^,;]*,?)?\s*$" % IDENT, line)
            if d and d.group(1) in docs and line.strip():
                lines[n] = line + " /**< " + inline_markup(docs[d.group(1)]) + " */"
        out.append(text[pos:start] + "\n".join(lines))
        pos = i
    out.append(text[pos:])
    return "".join(out)


def agg_follows(after):
    """Does a struct, union or enum definition start on the next line?"""
    return re.match(r"[ \t]*\n[ \t]*(?:struct|union|enum)\s+%s\s*\{" % IDENT, after) is not None


def filter_text(text, strict=False):
    if not strict:
        text = annotate_members(text)
    pieces = list(scan(text))
    out = []
    depth = []  # stack of brace kinds: "agg" (struct/union/enum) or "code"
    first_doc = True
    for k, (kind, a, b) in enumerate(pieces):
        seg = text[a:b]
        if kind == "code":
            out.append(seg)
            for m in re.finditer(r"[{}]", seg):
                if m.group() == "{":
                    before = (text[:a] + seg[: m.start()])[-300:]
                    before = re.split(r"[;{}]|\*/", before)[-1]
                    agg = re.search(r"\b(struct|union|enum)\b[^()]*$", before)
                    depth.append("agg" if agg else "code")
                elif depth:
                    depth.pop()
            continue
        if "code" in depth or "SPDX-License-Identifier" in seg:
            out.append(seg)
            continue
        after = text[b:pieces[k + 1][2]] if k + 1 < len(pieces) and pieces[k + 1][0] == "code" else ""
        if CLANG_FORMAT.match(seg):
            out.append(seg)
            continue
        # Look through clang-format directives on their own lines.
        j = k + 2
        while (after.strip() == "" and after.count("\n") == 1 and j + 1 < len(pieces)
               and pieces[j][0] == "comment" and CLANG_FORMAT.match(text[pieces[j][1]:pieces[j][2]])
               and pieces[j + 1][0] == "code"):
            nxt = text[pieces[j + 1][1]:pieces[j + 1][2]]
            after = after.rstrip(" \t") + (nxt[1:] if nxt.startswith("\n") else nxt)
            j += 2
        line_start = text.rfind("\n", 0, a) + 1
        trailing = text[line_start:a].strip() != ""
        doc = seg.startswith("/**") and not seg.startswith("/**/")
        decl, is_fn = next_decl(after)
        if first_doc and not trailing and FILE_HEAD.match(seg[2:].lstrip("*").strip(" \n*").split("\n")[0]):
            first_doc = False
            out.append("/** \\file" + convert(seg[3 if doc else 2:-2], False, True) + "*/")
            continue
        if trailing and not doc and not strict:
            out.append("/**<" + convert(seg[2:-2], False, False) + "*/")
        elif doc or (decl is not None and not strict):
            start = 3 if doc else 2
            if seg.startswith("/**<"):
                out.append(seg)
            else:
                members = doc and not strict and agg_follows(after)
                out.append("/**" + convert(seg[start:-2], is_fn, False, members) + "*/")
        else:
            out.append(seg)
    return "".join(out)


def md_text(text):
    """A Markdown page: Doxygen takes a page's title (and its {#label})
    from a heading on the first line only, and luf's pages start with
    their SPDX comment: swap the two lines (the line count stays).
    Markup for Doxygen alone is written "<!-- doxygen: X -->", which
    GitHub-like renderers hide: it becomes X (a page label after a
    heading, "[TOC]" on a line of its own)."""
    text = re.sub(r"<!-- doxygen: (.*?) -->", r"\1", text)
    lines = text.split("\n")
    if len(lines) > 1 and re.match(r"^<!--.*-->\s*$", lines[0]) and lines[1].startswith("# "):
        lines[0], lines[1] = lines[1], lines[0]
    return "\n".join(lines)


def main(argv):
    strict = "--strict" in argv
    md = "--md" in argv
    files = [x for x in argv[1:] if x not in ("--strict", "--md")]
    if len(files) != 1:
        sys.stderr.write("usage: kdoc2dox.py [--strict | --md] <file>\n")
        return 2
    with open(files[0], encoding="utf-8") as f:
        text = f.read()
    sys.stdout.write(md_text(text) if md else filter_text(text, strict))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
