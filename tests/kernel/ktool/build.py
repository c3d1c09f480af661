# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""tests/kernel/kbuild - build a small x86-64 kernel for QEMU from Debian's
linux-source-6.1, optionally patched, and print the path of its bzImage as
the last line of stdout (progress goes to stderr).

Usage: kbuild [--name NAME] [--series FILE] [--fragment FILE]... [--make VAR=VAL]...
              [--incremental-from NAME | --cold]
  --name NAME        label for logs and for --incremental-from (default: pristine or
                     the series' directory name)
  --series FILE      quilt-style series file: one patch per line, paths relative to
                     the series file's directory, '#' comments, applied with patch -p1
                     (absent: the pristine source)
  --fragment FILE    Kconfig fragment, merged in order on top of `make tinyconfig`
                     with scripts/kconfig/merge_config.sh, then `make olddefconfig`;
                     every CONFIG_ line requested must survive into .config, or the
                     build fails naming it. Default: tests/kernel/config/base.config
  --make VAR=VAL     extra make variable (W=1, KCFLAGS=..., C=1, ...), repeatable
  --incremental-from NAME
                     start a new key's build from a copy of the newest finished build
                     labelled NAME (files that differ between the two trees are made
                     newer than the copied objects, so make rebuilds exactly what
                     depends on them). Default: the newest build with the same --name,
                     source and compiler, if any.
  --cold             never start from another build's objects

Cache: ${LUF_KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/luf/kernel}
  lock                      flock: one kernel build at a time (cache hits do not wait)
  src/<srcid>/linux-source-6.1   the pristine tree, unpacked once per tarball content
  builds/<key>/             one per key: src/ (cp -al of the pristine tree + patches;
                            GNU patch writes a new file, breaking the hard link, which
                            is checked), src/out/ (make O=out), bzImage, build.log, info
A key is the hash of: tarball content, series file + every patch's content, each
fragment's content (in order), make variables, compiler and linker versions, and the
recipe version (RECIPE in ktool/build.py). Unchanged key: no rebuild. The
LUF_KERNEL_KEEP (default 12) most recently used builds are kept, older ones pruned.
Environment: LUF_KERNEL_CACHE, LUF_KERNEL_TARBALL (default
/usr/src/linux-source-6.1.tar.xz), LUF_KERNEL_KEEP, LUF_KERNEL_JOBS (default nproc).
Exit: 0 ok, 1 failure (patch, config or build; the last lines of the log are shown),
2 usage.
"""
import fcntl
import filecmp
import fnmatch
import glob
import hashlib
import itertools
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import types

from . import cli

RECIPE = 1  # bump when the way a key is built changes
VALUED = ("--name", "--series", "--fragment", "--make", "--incremental-from")
_SET = re.compile(r"(CONFIG_[A-Za-z0-9_]+)=(.*)")
_UNSET = re.compile(r"# (CONFIG_[A-Za-z0-9_]+) is not set")


def parse(argv):
    """The options of @argv: a namespace of name, series, incremental_from (str or
    None), fragment, make (lists) and cold; raises cli.Usage."""
    o = types.SimpleNamespace(name=None, series=None, incremental_from=None, fragment=[],
                              make=[], cold=False)
    for a, v in cli.pairs(argv, "kbuild", VALUED, ("--cold",)):
        attr = a[2:].replace("-", "_")
        if attr in ("fragment", "make"):
            getattr(o, attr).append(v)
        else:
            setattr(o, attr, v)
    return o


def check_makevars(makevars):
    """Raise cli.Fail unless every one of @makevars is VAR=VAL."""
    for v in makevars:
        if not re.match(r"[A-Za-z_][A-Za-z0-9_]*=", v):
            raise cli.Fail("--make wants VAR=VAL, got '%s'" % v)


def read_series(series):
    """The patches of the quilt-style series file @series (a real path), in order,
    as written there (relative to its directory): blank lines and '#' comments are
    skipped, a patch may be followed by -p1 or a comment. Raises cli.Fail on another
    option or a patch that cannot be read."""
    sdir, patches = os.path.dirname(series), []
    with open(series, errors="surrogateescape") as f:
        for line in f:
            w = line.split()
            if not w or w[0].startswith("#"):
                continue
            if len(w) > 1 and w[1] != "-p1" and not w[1].startswith("#"):
                raise cli.Fail("%s: only -p1 patches are supported ('%s %s')"
                               % (series, w[0], w[1]))
            if not os.access(os.path.join(sdir, w[0]), os.R_OK):
                raise cli.Fail("%s: no such patch: %s/%s" % (series, sdir, w[0]))
            patches.append(w[0])
    return patches


def sha(path):
    """The sha256 of the file @path: 64 hex digits."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def tarball_sha(tarball, memo):
    """The sha256 of @tarball, memoised in the file @memo by path, size, mtime and
    inode (one line: "PATH SIZE MTIME INODE SHA256")."""
    st = os.stat(tarball)
    tag = "%s %d %d %d" % (tarball, st.st_size, st.st_mtime_ns // 10**9, st.st_ino)
    words = (lines_of(memo) or [""])[0].split()
    if len(words) == 5 and " ".join(words[:4]) == tag:
        return words[4]
    digest = sha(tarball)
    with open("%s.%d" % (memo, os.getpid()), "w") as f:
        f.write("%s %s\n" % (tag, digest))
    os.replace(f.name, memo)
    return digest


def key_text(srcsha, ccver, ldver, fragments, makevars, series, patches):
    """The lines that make a build's key (its builds/<key>/key): @fragments and
    @series are real paths (series None: the pristine source), @patches as
    read_series() gives them."""
    lines = ["luf-kbuild recipe %d" % RECIPE, "source sha256 " + srcsha, "compiler " + ccver,
             "linker " + ldver, "base ARCH=x86_64 tinyconfig"]
    lines += ["fragment %s %s" % (sha(f), os.path.basename(f)) for f in fragments]
    lines += ["make " + v for v in makevars]
    if series is None:
        return lines + ["series none"]
    sdir = os.path.dirname(series)
    return lines + ["series " + sha(series)] + \
        ["patch %s %s" % (sha(os.path.join(sdir, p)), p) for p in patches]


def key_of(lines):
    """The key of the key text @lines: 16 hex digits of the sha256 of the lines, each
    ended by a newline."""
    text = "".join(l + "\n" for l in lines)
    return hashlib.sha256(text.encode(errors="surrogateescape")).hexdigest()[:16]


def unmet(fragments, config):
    """What the Kconfig fragments @fragments (paths, in order) request and the
    .config @config does not have: sorted lines "  SYM: requested V in FRAGMENT,
    .config has SYM=G" (or "has it unset"). The last fragment that mentions a
    symbol decides; "# SYM is not set" requests n, as does a symbol absent from
    .config."""
    want = {}
    for path in fragments:
        for line in lines_of(path):
            m = _SET.match(line)
            if m:
                want[m[1]] = (m[2], os.path.basename(path))
            elif _UNSET.match(line):
                want[_UNSET.match(line)[1]] = ("n", os.path.basename(path))
    got = dict(m.groups() for m in map(_SET.match, lines_of(config)) if m)
    return sorted("  %s: requested %s in %s, .config has %s"
                  % (s, w, frag, "%s=%s" % (s, got[s]) if s in got else "it unset")
                  for s, (w, frag) in want.items() if w != got.get(s, "n"))


def lines_of(path):
    """The lines of the text file @path without their newlines; [] if it is missing."""
    try:
        with open(path, errors="surrogateescape") as f:
            return f.read().splitlines()
    except FileNotFoundError:
        return []


def stdout_of(cmd, **kw):
    """The standard output of @cmd without its trailing newlines; None if it cannot
    run or exits nonzero."""
    try:
        p = cli.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, **kw)
    except OSError:
        return None
    return None if p.returncode else p.stdout.rstrip("\n")


def touch(path, ref=None):
    """Create @path if need be and set its times to now, or to those of @ref."""
    with open(path, "a"):
        pass
    if ref:
        st = os.stat(ref)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    else:
        os.utime(path)


def rmrf(path):
    """rm -rf the directory @path."""
    if os.path.lexists(path):
        shutil.rmtree(path)


def by_use(cache):
    """The build directories of @cache, the most recently used first (as ls -t)."""
    used = glob.glob(os.path.join(cache, "builds", "*", "used"))
    return [os.path.dirname(u) for u in sorted(used, key=lambda u: (-os.stat(u).st_mtime_ns, u))]


def utc():
    """Now, as date -u +%FT%TZ."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class Build:
    """One run of kbuild, options @o (parse()); its steps raise cli.Fail."""

    def __init__(self, o):
        self.o, self.name = o, o.name
        self.tarball = os.environ.get("LUF_KERNEL_TARBALL") or cli.TARBALL
        self.keep = cli.positive(os.environ.get("LUF_KERNEL_KEEP") or "12", "LUF_KERNEL_KEEP")
        self.jobs = os.environ.get("LUF_KERNEL_JOBS") or str(len(os.sched_getaffinity(0)))
        self.fragments = o.fragment or [os.path.join(cli.KDIR, "config", "base.config")]
        self.makevars, self.series, self.patches = o.make, None, []

    def say(self, msg):
        cli.say("kbuild[%s]" % (self.name or "?"), msg)

    def run(self):
        """Find or build the kernel; its bzImage's path."""
        check_makevars(self.makevars)
        for i, f in enumerate(self.fragments):
            if not os.access(f, os.R_OK):
                raise cli.Fail("no such fragment: %s" % f)
            self.fragments[i] = os.path.realpath(f)
        if not os.access(self.tarball, os.R_OK):
            raise cli.Fail("no %s (scripts/deps.sh kernel installs linux-source-6.1)"
                           % self.tarball)
        if self.o.series:
            if not os.access(self.o.series, os.R_OK):
                raise cli.Fail("no such series file: %s" % self.o.series)
            self.series = os.path.realpath(self.o.series)
            self.patches = read_series(self.series)
            self.name = self.name or os.path.basename(os.path.dirname(self.series))
        self.name = self.name or "pristine"

        for d in ("src", "builds"):
            os.makedirs(os.path.join(cli.cache_dir(), d), exist_ok=True)
        self.cache = os.path.abspath(cli.cache_dir())
        self.srcsha = tarball_sha(self.tarball, os.path.join(self.cache, "src", "tarball.sha256"))
        cc = "gcc"
        for v in self.makevars:
            cc = v[3:] if v.startswith("CC=") else "clang" if v == "LLVM=1" else cc
        ccver = stdout_of([cc, "--version"])
        if ccver is None:
            raise cli.Fail("no compiler '%s'" % cc)
        ldver = stdout_of(["ld", "--version"])
        if ldver is None:
            raise cli.Fail("no linker 'ld'")
        self.lines = key_text(self.srcsha, ccver.split("\n")[0], ldver.split("\n")[0],
                              self.fragments, self.makevars, self.series, self.patches)
        self.key = key_of(self.lines)
        self.bdir = os.path.join(self.cache, "builds", self.key)
        bzimage = os.path.join(self.bdir, "bzImage")

        # A finished build: print it without taking the lock.
        if self.done():
            self.label()
            version = [l[8:] for l in lines_of(self.path("info")) if l.startswith("version ")]
            self.say("cached build %s (%s)" % (self.key, "\n".join(version)))
            return bzimage
        self.lock()
        if self.done():  # built while we waited
            touch(self.path("used"))
            return bzimage
        t_start = int(time.time())
        self.unpack(t_start)
        self.kver = stdout_of(["make", "-s", "-C", self.pristine, "kernelversion"])
        if self.kver is None:
            raise cli.Fail("cannot read the kernel version")
        os.makedirs(self.bdir, exist_ok=True)
        with open(self.path("key"), "w", errors="surrogateescape") as f:
            f.write("".join(l + "\n" for l in self.lines))
        self.label()
        self.log = self.path("build.log")
        self.patch()
        self.out = self.path("src", "out")  # srctree is "..": a tree + out pair can be copied
        seed = None if self.o.cold or os.path.exists(os.path.join(self.out, ".config")) \
            else self.find_seed()
        if seed:
            self.seed_from(seed)
        os.makedirs(self.out, exist_ok=True)
        self.configure()
        bt = self.make_all()

        # Nothing may have written through a hard link into the pristine tree.
        srcdir = os.path.dirname(self.pristine)
        changed = cli.output(["find", self.pristine, "-newer", os.path.join(srcdir, "unpacked"),
                              "-print", "-quit"]).rstrip("\n")
        if changed:
            raise cli.Fail("the pristine tree changed (%s): remove %s" % (changed, srcdir))
        shutil.copy(os.path.join(self.out, "arch", "x86", "boot", "bzImage"), bzimage)
        with open(self.path("info"), "w") as f:
            f.write("name %s\nversion %s (linux-source-6.1 %s)\nbuild_seconds %d\n"
                    "seeded_from %s\nbuilt %s\n" % (self.name, self.kver, self.srcver, bt,
                                                    os.path.basename(seed or ""), utc()))
        touch(self.path("done"))
        touch(self.path("used"))
        self.say("built in %d s%s, total %d s" % (bt, " (incremental)" if seed else "",
                                                 int(time.time()) - t_start))
        self.prune()
        return bzimage

    def path(self, *names):
        return os.path.join(self.bdir, *names)

    def done(self):
        return os.path.exists(self.path("done")) and os.access(self.path("bzImage"), os.R_OK)

    def label(self):
        """Mark this key's build used, and labelled with this name."""
        touch(self.path("used"))
        if self.name not in lines_of(self.path("names")):
            with open(self.path("names"), "a") as f:
                f.write(self.name + "\n")

    def lock(self):
        """Take <cache>/lock (one kernel build at a time), saying so every minute while
        waiting. make inherits the descriptor, as it did the shell's."""
        path = os.path.join(self.cache, "lock")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        os.set_inheritable(fd, True)
        for waited in itertools.count():  # seconds, about
            try:
                return fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if not waited:
                    self.say("waiting for another kernel build (lock %s)" % path)
                elif waited % 60 == 0:
                    self.say("still waiting for the other build after %d s" % waited)
                time.sleep(1)

    def unpack(self, t_start):
        """The pristine tree, unpacked once per tarball content."""
        ver = stdout_of(["dpkg-query", "-W", "-f=${Version}", "linux-source-6.1"])
        self.srcver = "unknown" if ver is None else ver
        srcid = self.srcsha[:16]
        srcdir = os.path.join(self.cache, "src", srcid)
        self.pristine = os.path.join(srcdir, "linux-source-6.1")
        if os.path.exists(os.path.join(srcdir, "unpacked")):
            return
        self.say("unpacking %s (package %s) into %s" % (self.tarball, self.srcver, srcdir))
        rmrf(srcdir)
        os.makedirs(srcdir + ".tmp", exist_ok=True)
        if cli.run(["tar", "-xJf", self.tarball, "-C", srcdir + ".tmp"]).returncode:
            raise cli.Fail("cannot unpack %s" % self.tarball)
        top = sorted(os.listdir(srcdir + ".tmp"))
        if top != ["linux-source-6.1"]:
            raise cli.Fail("unexpected top directory '%s' in %s" % ("\n".join(top), self.tarball))
        os.rename(srcdir + ".tmp", srcdir)
        with open(os.path.join(srcdir, "package-version"), "w") as f:
            f.write(self.srcver + "\n")
        touch(os.path.join(srcdir, "unpacked"))
        self.say("unpacked in %d s" % (int(time.time()) - t_start))

    def patch(self):
        """This key's tree: hard links to the pristine files, patched; patched-files
        lists the files the series wrote."""
        if os.path.exists(self.path("patched")):
            return
        src = self.path("src")
        rmrf(src)
        cli.output(["cp", "-al", self.pristine, src])
        files = set()
        for p in self.patches:
            self.say("applying " + p)
            r = cli.run(["patch", "-p1", "--batch", "--forward", "--no-backup-if-mismatch",
                         "-i", os.path.join(os.path.dirname(self.series), p)], cwd=src,
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            if r.returncode:
                sys.stderr.write(r.stdout)
                rmrf(src)
                raise cli.Fail("patch %s does not apply to %s" % (p, self.kver))
            for l in r.stdout.splitlines():
                if re.search("fuzz|offset", l, re.I):
                    sys.stderr.write("  %s\n" % l)
                if l.startswith("patching file "):
                    f = l[len("patching file "):]
                    files.add(f[1:-1] if len(f) > 1 and f[0] == f[-1] == "'" else f)
        with open(self.path("patched-files"), "w") as f:
            f.write("".join(l + "\n" for l in sorted(files)))
        # GNU patch writes a new file and renames it: the pristine inode stays untouched.
        for f in sorted(files):
            a, b = os.path.join(self.pristine, f), os.path.join(src, f)
            if os.path.exists(a) and os.path.exists(b) and os.stat(a).st_ino == os.stat(b).st_ino:
                raise cli.Fail("patching %s wrote through the hard link into the pristine tree"
                               % f)
        touch(self.path("patched"))

    def find_seed(self):
        """The build to start from (incremental), or None: the newest finished one
        labelled --incremental-from, else the newest with this name, source and
        compiler."""
        want = self.o.incremental_from or self.name
        for d in by_use(self.cache):
            if d == self.bdir or not os.path.exists(os.path.join(d, "done")) or \
                    want not in lines_of(os.path.join(d, "names")):
                continue
            if self.o.incremental_from or \
                    lines_of(os.path.join(d, "key"))[1:4] == self.lines[1:4]:
                return d
        if self.o.incremental_from:
            raise cli.Fail("--incremental-from %s: no finished build labelled so"
                           % self.o.incremental_from)
        return None

    def seed_from(self, seed):
        """Start from a copy of the objects of the build @seed."""
        self.say("starting from the objects of %s (%s)"
                 % (os.path.basename(seed), " ".join(lines_of(os.path.join(seed, "names")))))
        rmrf(self.out + ".tmp")
        rmrf(self.out)  # at most a configuration that failed
        cli.output(["cp", "-a", os.path.join(seed, "src", "out"), self.out + ".tmp"])
        os.rename(self.out + ".tmp", self.out)
        # tools/ (objtool, which every object depends on) records absolute paths:
        # point them at this tree, mtimes kept, or objtool and then everything rebuilds.
        theirs, ours = os.path.join(seed, "src").encode(), self.path("src").encode()
        for top, _, names in os.walk(os.path.join(self.out, "tools")):
            for n in names:
                f = os.path.join(top, n)
                if os.path.islink(f) or not (fnmatch.fnmatchcase(n, ".*.cmd") or
                                             fnmatch.fnmatchcase(n, "*.d")):
                    continue
                with open(f, "rb") as fh:
                    text = fh.read()
                if theirs in text:
                    with open(f + ".luf-tmp", "wb") as fh:
                        fh.write(text.replace(theirs, ours))
                    touch(f + ".luf-tmp", ref=f)
                    os.replace(f + ".luf-tmp", f)
        # A file patched in either tree may differ. One our series wrote (a new inode)
        # with the seed's content keeps the seed's mtime, so that what depends on it is
        # not rebuilt; any other gets a fresh inode and mtime in ours.
        mine = set(lines_of(self.path("patched-files")))
        for f in sorted(mine | set(lines_of(os.path.join(seed, "patched-files")))):
            ours, theirs = self.path("src", f), os.path.join(seed, "src", f)
            if not os.path.exists(ours):
                continue
            if f in mine and os.path.exists(theirs) and filecmp.cmp(theirs, ours, shallow=False):
                touch(ours, ref=theirs)
                continue
            shutil.copy2(ours, ours + ".luf-tmp")
            os.replace(ours + ".luf-tmp", ours)
            touch(ours)

    def logged(self, cmd, **kw):
        """Start @cmd, its output appended to build.log (make inherits the lock); its Popen."""
        with open(self.log, "ab") as log:
            return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, close_fds=False,
                                    **kw)

    def make(self, *args):
        """Start make ARGS in this key's tree (logged())."""
        return self.logged(["make", "-C", self.path("src"), "O=out", "ARCH=x86_64"] +
                           self.makevars + list(args))

    def fail_log(self, what):
        sys.stderr.write("----- last lines of %s -----\n" % self.log)
        lines = [l + "\n" for l in lines_of(self.log) if not l.startswith("make[")]
        sys.stderr.write("".join(lines[-40:]))
        raise cli.Fail("%s (full log: %s)" % (what, self.log))

    def configure(self):
        """tinyconfig + the fragments, then olddefconfig; check what was asked for."""
        with open(self.log, "a", errors="surrogateescape") as f:
            f.write("=== %s key %s name %s\n" % (utc(), self.key, self.name))
            f.write("".join(l + "\n" for l in self.lines))
        self.say("configuring %s: tinyconfig + %s"
                 % (self.kver, " ".join(os.path.basename(f) for f in self.fragments)))
        merge = ["bash", "../scripts/kconfig/merge_config.sh", "-m", "-O", ".", ".config"]
        if self.make("tinyconfig").wait() or \
                self.logged(merge + self.fragments, cwd=self.out,
                            env=dict(os.environ, CONFIG_="CONFIG_")).wait() or \
                self.make("olddefconfig").wait():
            self.fail_log("configuration failed")
        missing = unmet(self.fragments, os.path.join(self.out, ".config"))
        if missing:
            sys.stderr.write("".join(l + "\n" for l in missing))
            raise cli.Fail("requested options did not survive into .config (unmet dependencies"
                           " or wrong names; %s/.config)" % self.out)

    def make_all(self):
        """Build, saying every 30 s how far; the seconds it took."""
        self.say("building bzImage with -j%s (%s, key %s, log %s)"
                 % (self.jobs, self.kver, self.key, self.log))
        t0 = last = int(time.time())
        p = self.make("-j" + self.jobs, "all")
        term = signal.signal(signal.SIGTERM, lambda *_: p.terminate())
        try:
            while p.poll() is None:
                time.sleep(2)
                now = int(time.time())
                if now - last >= 30:
                    last = now
                    steps = [l for l in lines_of(self.log) if re.match(r"  [A-Z]", l)]
                    self.say("still building after %d s: %s"
                             % (now - t0, steps[-1].lstrip(" ") if steps else ""))
        finally:
            if p.poll() is None:
                p.terminate()
            signal.signal(signal.SIGTERM, term)
        if p.returncode:
            rc = p.returncode if p.returncode > 0 else 128 - p.returncode
            self.fail_log("kernel build failed (make exit %d)" % rc)
        return int(time.time()) - t0

    def prune(self):
        """Keep the most recently used builds; drop unfinished ones and unused sources."""
        n = 0
        for d in by_use(self.cache):
            if d == self.bdir:
                continue
            if not os.path.exists(os.path.join(d, "done")):
                rmrf(d)
                continue
            n += 1
            if n >= self.keep:
                self.say("pruning build %s (%s)" % (os.path.basename(d), " ".join(
                    lines_of(os.path.join(d, "names")))))
                rmrf(d)
        for d in glob.glob(os.path.join(self.cache, "builds", "*", "")):
            if not os.path.exists(os.path.join(d, "used")):  # an aborted start
                rmrf(d)
        keys = [l for k in glob.glob(os.path.join(self.cache, "builds", "*", "key"))
                for l in lines_of(k)]
        for s in glob.glob(os.path.join(self.cache, "src", "*", "")):
            s = os.path.basename(os.path.dirname(s))
            if s != self.srcsha[:16] and \
                    not any(l.startswith("source sha256 " + s) for l in keys):
                rmrf(os.path.join(self.cache, "src", s))


def main(argv):
    b = Build(parse(argv))
    try:
        print(b.run())
    except (cli.Fail, OSError) as e:
        sys.stdout.flush()
        sys.stderr.write("kbuild[%s]: FAIL: %s\n" % (b.name or "?", e))
        return e.status if isinstance(e, cli.Fail) else 1
    return 0


if __name__ == "__main__":
    cli.entry(main, "kbuild", __doc__)
