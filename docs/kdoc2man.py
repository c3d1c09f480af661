#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""Section 3 manual pages from a header's kernel-doc comments, the same
comments the API reference is made of (docs/kdoc2dox.py).

Usage: kdoc2man.py --include luf/luf_proc.h --version 0.2.0 HEADER OUTDIR
       kdoc2man.py --include luf/error.h --only luf_last_error,luf_clear_error
                   --no-header-page --see-also luf_proc --libs=-lluf --cmake luf::luf
                   --pkg-config luf ... HEADER OUTDIR

Writes into OUTDIR:
  <function>.3   one page per function, or function-like macro, with a
                 kernel-doc comment ("name() - summary"): NAME, SYNOPSIS
                 (the #include and the prototype, or the #define line),
                 ARGUMENTS, DESCRIPTION, CONTEXT, RETURN VALUE, SEE ALSO
  <stem>.3       the header's own page (luf_proc.3 for luf_proc.h): its
                 file comment, its structures and macros, and the list of
                 its functions; not with --no-header-page
and prints the names of the pages it wrote. --only NAMES (comma-separated)
writes the pages of those functions alone, and fails if one has no
kernel-doc comment; --see-also PAGE (repeatable) adds PAGE(3) to every
SEE ALSO section; --libs, --cmake and --pkg-config say what a program
links with (default: libluf_user and libluf, luf::user, luf-user). No
dependency but Python 3.
"""
import argparse
import os
import re
import sys

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
HEAD = re.compile(r"^(%s)\(\)\s+-\s+(.*)$" % IDENT)
AGG_HEAD = re.compile(r"^(struct|union|enum)\s+(%s)\s+-\s+(.*)$" % IDENT)
PARAM = re.compile(r"^@(%s|\.\.\.)\s*:\s*(.*)$" % IDENT)
SECTION = re.compile(r"^(Context|Returns?):\s*(.*)$")
RULE = re.compile(r"^([A-Z][0-9]+)\.\s+(.*)$")


def roff_text(s):
    """Plain text to roff: escape backslashes, mark up kernel-doc."""
    s = s.replace("\\", "\\e")
    s = re.sub(r"(?<![\w@])@(%s)" % IDENT, r"\\fI\1\\fP", s)
    s = re.sub(r"(?<![\w%])%(" + IDENT + ")", r"\\fB\1\\fP", s)
    s = re.sub(r"&((?:struct|union|enum)\s+" + IDENT + ")", r"\1", s)
    s = re.sub(r"\b(%s)\(\)" % IDENT, r"\\fB\1\\fP()", s)
    s = s.replace("-", "\\-")
    return s


def roff_line(s):
    """A line of roff input that does not start a request."""
    return "\\&" + s if s[:1] in (".", "'") else s


def roff_code(s):
    s = s.replace("\\", "\\e").replace("-", "\\-")
    return roff_line(s)


def comment_body(block):
    """The text lines of a /** ... */ block, prefix (" * ") removed."""
    inner = block[3:-2]
    out = []
    for line in inner.split("\n"):
        m = re.match(r"^\s*\*(?!/) ?(.*)$", line)
        out.append((m.group(1) if m else line.strip()).rstrip())
    while out and not out[0].strip():
        out.pop(0)
    while out and not out[-1].strip():
        out.pop()
    return out


def paragraphs(lines):
    """roff for free text: paragraphs, indented blocks kept as they are
    (diagrams), "R1. text" rules as tagged paragraphs."""
    out = []
    base = min((len(x) - len(x.lstrip()) for x in lines if x.strip()), default=0)
    i, n = 0, len(lines)
    para = []

    def flush_para():
        if para:
            out.append(".PP")
            out.extend(roff_line(roff_text(x.strip())) for x in para)
            para.clear()

    while i < n:
        line = lines[i]
        indent = len(line) - len(line.lstrip())
        if not line.strip():
            flush_para()
            i += 1
            continue
        rule = RULE.match(line.strip()) if indent <= base + 1 else None
        if rule:
            flush_para()
            out.append('.IP "%s." 4' % rule.group(1))
            out.append(roff_line(roff_text(rule.group(2))))
            i += 1
            while i < n and lines[i].strip() and len(lines[i]) - len(lines[i].lstrip()) > base + 1:
                out.append(roff_line(roff_text(lines[i].strip())))
                i += 1
            if i < n and lines[i].strip() and not RULE.match(lines[i].strip()):
                out.append(".PP")
            continue
        if indent > base + 1 and not para:
            # A diagram or table: as it is, in a no-fill block.
            out.append(".PP")
            out.append(".nf")
            out.append(".RS 2")
            while i < n and lines[i].strip() and len(lines[i]) - len(lines[i].lstrip()) > base:
                out.append(roff_code(lines[i][base + 2:] if lines[i][:base + 2].strip() == ""
                                     else lines[i].strip()))
                i += 1
            out.append(".RE")
            out.append(".fi")
            continue
        para.append(line)
        i += 1
    flush_para()
    return out


def parse_function(lines):
    """kernel-doc function comment -> name, summary, params, body, context, ret."""
    m = HEAD.match(lines[0].strip())
    name, summary = m.group(1), m.group(2)
    params, body, context, ret = [], [], [], []
    cur = None  # where continuation lines go
    for line in lines[1:]:
        s = line.strip()
        pm = PARAM.match(s)
        sm = SECTION.match(s)
        if pm and cur is not body and cur is not context and cur is not ret:
            params.append([pm.group(1), pm.group(2)])
            cur = params
        elif sm:
            cur = context if sm.group(1) == "Context" else ret
            if sm.group(2):
                cur.append(sm.group(2))
        elif cur is params and s and line[:1] in ("\t", " "):
            params[-1][1] += " " + s
        elif cur is params and not s:
            cur = body
        elif cur in (context, ret) and cur is not None:
            if s:
                cur.append(s)
            else:
                cur = body
                body.append("")
        else:
            cur = body
            body.append(line)
    return name, summary, params, body, context, ret


def declaration(text, end):
    """The declaration after a comment, up to its ; or {, on one line; for
    a function-like macro (plain comments such as "clang-format off" may
    come between), its #define line up to the parameter list."""
    d = re.match(r"\s*(?:/\*.*?\*/\s*)*(#define\s+%s\([^)]*\))" % IDENT, text[end:], re.S)
    if d:
        return d.group(1)
    m = re.search(r"[;{]", text[end:])
    decl = text[end:end + m.start()] if m else ""
    decl = " ".join(decl.split())
    decl = re.sub(r"\(\s+", "(", decl)
    return decl


def synopsis(decl):
    """A declaration as the SYNOPSIS shows it: a prototype ends with ;."""
    return decl if decl.startswith("#define") else decl + ";"


def th(name, version, title):
    return ['.\\" SPDX-License-Identifier: GPL-2.0-only OR MIT',
            '.\\" Generated by docs/kdoc2man.py from the kernel-doc comments of the header: do not edit.',
            '.TH "%s" 3 "" "luf %s" "%s"' % (name.upper(), version, title),
            ".nh", ".ad l"]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--include", required=True, help="the header as a consumer includes it")
    ap.add_argument("--version", default="")
    ap.add_argument("--only", default="", help="comma-separated functions: their pages alone")
    ap.add_argument("--no-header-page", action="store_true", help="no <stem>.3 page")
    ap.add_argument("--see-also", action="append", default=[], help="a page every SEE ALSO names")
    ap.add_argument("--libs", default="-lluf_user -lluf", help="what a program links with")
    ap.add_argument("--cmake", default="luf::user", help="the CMake target to link")
    ap.add_argument("--pkg-config", default="luf-user", help="the pkg-config module")
    ap.add_argument("header")
    ap.add_argument("outdir")
    a = ap.parse_args(argv[1:])
    with open(a.header, encoding="utf-8") as f:
        text = f.read()
    stem = os.path.splitext(os.path.basename(a.include))[0]
    title = "luf Library Functions Manual"
    os.makedirs(a.outdir, exist_ok=True)

    funcs, aggs, file_doc, macros = [], [], None, []
    for m in re.finditer(r"/\*.*?\*/", text, re.S):
        block = m.group(0)
        if block.startswith("/**") and not block.startswith("/**<"):
            lines = comment_body(block)
            if not lines:
                continue
            if HEAD.match(lines[0].strip()):
                funcs.append((parse_function(lines), declaration(text, m.end())))
            elif AGG_HEAD.match(lines[0].strip()):
                g = AGG_HEAD.match(lines[0].strip())
                d = re.match(r"\s*\n((?:struct|union|enum)\s+%s\s*\{.*?\n\};)" % IDENT,
                             text[m.end():], re.S)
                aggs.append((g.group(1) + " " + g.group(2), g.group(3), lines[1:],
                             d.group(1) if d else ""))
        elif file_doc is None and re.match(r"/\*\s*\n\s*\*\s*[\w/.-]+\.h\s+-\s", block):
            file_doc = comment_body("/**" + block[2:])
        else:
            d = re.match(r"[ \t]*\n(?:/\*.*?\*/\n)*#define\s+(%s(?:\([^)]*\))?)" % IDENT,
                         text[m.end():], re.S)
            if d and not block.startswith("/* clang-format"):
                macros.append((d.group(1), " ".join(comment_body("/**" + block[2:]))))
    if not funcs:
        sys.stderr.write("kdoc2man: no kernel-doc function comment in %s\n" % a.header)
        return 1
    if a.only:
        want = a.only.split(",")
        missing = [x for x in want if x not in [f[0][0] for f in funcs]]
        if missing:
            sys.stderr.write("kdoc2man: no kernel-doc comment for %s in %s\n"
                             % (", ".join(missing), a.header))
            return 1
        funcs = [f for f in funcs if f[0][0] in want]
    names = [f[0][0] for f in funcs]

    for (name, summary, params, body, context, ret), decl in funcs:
        out = th(name, a.version, title)
        out += [".SH NAME", "%s \\- %s" % (name, roff_text(summary)),
                ".SH SYNOPSIS", ".nf", ".B #include <%s>" % a.include, ".PP",
                roff_code(synopsis(decl)), ".fi"]
        if not decl.startswith("#define"):
            out += [".PP", "Link with \\fI%s\\fP (CMake: \\fB%s\\fP; pkg\\-config: \\fB%s\\fP)."
                    % tuple(x.replace("-", "\\-") for x in (a.libs, a.cmake, a.pkg_config))]
        if params:
            out.append(".SH ARGUMENTS")
            for p, desc in params:
                out += ['.IP "\\fI%s\\fP" 4' % p, roff_line(roff_text(desc))]
        if any(x.strip() for x in body):
            out.append(".SH DESCRIPTION")
            out += paragraphs(body)
        if context:
            out += [".SH CONTEXT", roff_line(roff_text(" ".join(context)))]
        if ret:
            out += [".SH RETURN VALUE", roff_text(" ".join(ret))]
        also = [] if a.no_header_page else ["%s (3)" % stem]
        also += ["%s (3)" % x for x in a.see_also + names if x != name]
        out += [".SH SEE ALSO", ",\n".join(".BR " + x for x in also)]
        with open(os.path.join(a.outdir, name + ".3"), "w", encoding="utf-8") as f:
            f.write("\n".join(out) + "\n")
        print(name + ".3")

    if a.no_header_page:
        return 0
    # The header's own page.
    out = th(stem, a.version, title)
    summary = ""
    doc = file_doc or []
    if doc:
        m = re.match(r"^[\w/.-]+\.h\s+-\s+(.*)$", doc[0].strip())
        summary = m.group(1) if m else doc[0]
        doc = doc[1:]
        while doc and doc[0].strip() and not summary.endswith("."):
            summary += " " + doc[0].strip()
            doc = doc[1:]
    out += [".SH NAME", "%s \\- %s" % (stem, roff_text(summary.rstrip(".")))]
    out += [".SH SYNOPSIS", ".nf", ".B #include <%s>" % a.include, ".PP"]
    out += [roff_code(synopsis(decl)) for _, decl in funcs]
    out += [".fi"]
    if doc:
        out += [".SH DESCRIPTION"] + paragraphs(doc)
    if aggs:
        out.append(".SH STRUCTURES")
        for name, summary, lines, definition in aggs:
            out += [".SS %s" % name, roff_line(roff_text(summary)), ".PP", ".nf", ".RS 2"]
            out += [roff_code(x.replace("\t", "    ")) for x in definition.split("\n")]
            out += [".RE", ".fi"]
            members = [x for x in lines if x.strip()]
            cur = []
            rest = []
            for x in lines:
                pm = PARAM.match(x.strip())
                if pm:
                    cur.append([pm.group(1), pm.group(2)])
                elif cur and x.strip() and x[:1] in ("\t", " ") and not rest:
                    cur[-1][1] += " " + x.strip()
                else:
                    rest.append(x)
            for p, desc in cur:
                out += ['.IP "\\fI%s\\fP" 4' % p, roff_line(roff_text(desc))]
            if members and any(x.strip() for x in rest):
                out += paragraphs(rest)
    if macros:
        out.append(".SH MACROS")
        for name, desc in macros:
            out += ['.TP', '.B %s' % roff_code(name), roff_line(roff_text(desc))]
    out += [".SH FUNCTIONS"]
    for (name, summary, _, _, _, _), _ in funcs:
        out += [".TP", ".BR %s (3)" % name, roff_line(roff_text(summary))]
    with open(os.path.join(a.outdir, stem + ".3"), "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")
    print(stem + ".3")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
