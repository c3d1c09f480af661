# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""What every ktool command shares: where things are, messages, usage from the
module's docstring, and running a command line.

A command module defines main(argv) -> exit status and ends with
`if __name__ == "__main__": cli.entry(main, NAME, __doc__)`; its shell entry point in
tests/kernel/ is one line that runs `python3 -m ktool.NAME`.
"""
import gzip
import os
import re
import signal
import subprocess
import sys

KDIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # tests/kernel
REPO = os.path.dirname(os.path.dirname(KDIR))
SERIES = os.path.join(REPO, "lib", "kernel", "patches", "series")
TARBALL = "/usr/src/linux-source-6.1.tar.xz"


class Fail(Exception):
    """A failure to report as "NAME: FAIL: message" and exit with its status."""

    def __init__(self, msg, status=1):
        super().__init__(msg)
        self.status = status


class Usage(Exception):
    """Bad arguments: the message, then the usage, exit 2."""


def cache_dir():
    """The kbuild cache: $LUF_KERNEL_CACHE, else $XDG_CACHE_HOME/luf/kernel, else
    ~/.cache/luf/kernel."""
    c = os.environ.get("LUF_KERNEL_CACHE")
    if c:
        return c
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(xdg, "luf", "kernel")


def usage_text(doc):
    """The usage part of a module docstring: from the line starting "Usage:" (or
    the whole docstring without one) to the end."""
    lines = doc.strip("\n").splitlines()
    for i, l in enumerate(lines):
        if l.startswith("Usage:"):
            return "\n".join(lines[i:]) + "\n"
    return "\n".join(lines) + "\n"


def lines(text):
    """@text's lines as grep and tail see them: split at "\\n" only, no empty last one."""
    out = text.split("\n")
    return out[:-1] if out[-1] == "" else out


def say(name, msg, stream=None):
    """One progress line, "NAME: msg", to @stream (default stderr)."""
    s = stream or sys.stderr
    s.write("%s: %s\n" % (name, msg))
    s.flush()


def run(cmd, **kw):
    """subprocess.run() of the list @cmd, text mode, not raising on a nonzero
    status. Interrupted (Ctrl-C, or SIGTERM turned into KeyboardInterrupt by
    entry()), it lets the child end first: boot then stops its QEMU and removes
    its scratch directory (all but the console and results: it failed), timeout
    passes the signal on to QEMU. The child gets
    5 s to see a Ctrl-C of its own, then SIGTERM and 60 s, then SIGKILL."""
    kw.setdefault("text", True)
    kw.setdefault("errors", "replace")
    data = kw.pop("input", None)
    if data is not None:
        kw["stdin"] = subprocess.PIPE
    with subprocess.Popen(cmd, **kw) as p:
        try:
            out, err = p.communicate(data)
        except KeyboardInterrupt:
            for sig, wait in ((None, 5), (signal.SIGTERM, 60), (signal.SIGKILL, None)):
                if sig:
                    p.send_signal(sig)
                try:
                    p.wait(wait)
                    break
                except subprocess.TimeoutExpired:
                    pass
            raise
    return subprocess.CompletedProcess(cmd, p.returncode, out, err)


def output(cmd, **kw):
    """The standard output of @cmd; raises Fail naming it if it exits nonzero."""
    p = run(cmd, stdout=subprocess.PIPE, **kw)
    if p.returncode:
        raise Fail("%s exited %d" % (cmd[0], p.returncode))
    return p.stdout


def pairs(argv, name, valued, flags=(), maybe_empty=()):
    """@argv as a list of (option, value) in order: True for an option of @flags,
    the next argument for one of @valued (not empty unless the option is in
    @maybe_empty). Raises cli.Usage on -h/--help, an unknown argument or a
    missing value."""
    out, i = [], 0
    while i < len(argv):
        a = argv[i]
        if a in flags:
            out.append((a, True))
            i += 1
        elif a in valued and i + 1 < len(argv) and (argv[i + 1] or a in maybe_empty):
            out.append((a, argv[i + 1]))
            i += 2
        elif a in valued:
            raise Usage("%s: %s wants a value" % (name, a))
        elif a in ("-h", "--help"):
            raise Usage("")
        else:
            raise Usage("%s: unknown argument: %s" % (name, a))
    return out


def initramfs(ird, out):
    """Write the directory @ird as the gzipped newc cpio archive @out (an initramfs)."""
    names = output(["find", "."], cwd=ird).encode()
    p = subprocess.run(["cpio", "-o", "-H", "newc", "--quiet"], cwd=ird, input=names,
                       stdout=subprocess.PIPE, check=False)
    if p.returncode:
        raise Fail("cpio exited %d" % p.returncode)
    with open(out, "wb") as f:
        f.write(gzip.compress(p.stdout, compresslevel=1))


def positive(text, what):
    """The positive integer @text, or Usage naming @what."""
    if not re.fullmatch(r"[1-9][0-9]*", text):
        raise Usage("%s: not a positive integer: %s" % (what, text))
    return int(text)


def _interrupted(signum, frame):
    raise KeyboardInterrupt


def entry(main, name=None, doc=None, term=False):
    """Run main(sys.argv[1:]) and exit with its status: Fail prints "NAME: FAIL:
    msg" (exit its status), Usage the message and @doc's usage (exit 2), an
    interrupt exits 130. @term: SIGTERM interrupts too (what runs boots: run()
    then ends the child before the scratch directories go)."""
    name = name or os.path.basename(sys.argv[0]).replace(".py", "")
    if term:
        signal.signal(signal.SIGTERM, _interrupted)
    try:
        sys.exit(main(sys.argv[1:]) or 0)
    except Fail as e:
        sys.stdout.flush()
        sys.stderr.write("%s: FAIL: %s\n" % (name, e))
        sys.exit(e.status)
    except Usage as e:
        sys.stdout.flush()
        if str(e):
            sys.stderr.write("%s\n" % e)
        if doc:
            sys.stderr.write(usage_text(doc))
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)
