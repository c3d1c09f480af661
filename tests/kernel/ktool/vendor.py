# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""tests/kernel/vendor: follow the vendoring guide in lib/kernel/README.md as a
new user would, in a scratch directory laid out like a kernel tree, and build
the result W=1 (warning-free) against KDIR:
  steps 1-2: copy into <tree>/lib/luf/, hook lib/Makefile and lib/Kconfig;
  step 3:    Kconfig accepts CONFIG_LUF_SELFTEST=m (the kernel's own
             scripts/kconfig/conf), and lib/ builds with "obj-y += luf/";
  step 4:    a driver of one's own, with luf_kernel.[ch] copied next to it.
Called by tests/kernel/run; KDIR defaults to the newest linux-headers-*-amd64.

Usage: vendor <scratch-dir>
Exit: 0 pass, 1 fail (<scratch-dir> is emptied first and keeps the build logs).
"""
import glob
import os
import re
import shutil
import subprocess
import sys

from . import cli

MODULE = os.path.join(cli.REPO, "lib", "kernel", "module")

# Step 4's driver: one instance, one deferred removal, one flush.
DRIVER_C = """\
// SPDX-License-Identifier: GPL-2.0-only OR MIT
/* A minimal luf user: one instance, one deferred removal, one flush. */
#include <linux/module.h>
#include <linux/slab.h>
#include "luf_kernel.h"

static int __init lufdemo_init(void)
{
	struct luf_kernel *k = luf_kernel_create(0);
	struct luf_batch *b;
	int ret = -ENOMEM;

	if (!k)
		return -ENOMEM;
	b = kzalloc(luf_batch_size(k->luf.nr_cpus), GFP_KERNEL);
	if (b && !luf_batch_init(b, k->luf.nr_cpus)) {
		luf_kernel_mask_from_cpumask(b->cpus, k->luf.nr_cpus, cpu_online_mask);
		ret = luf_batch_add(b, b->cpus, luf_ugen_stamp(&k->luf.ugen), false);
		if (!ret)
			ret = luf_flush_batch(&k->luf, raw_smp_processor_id(), b);
	}
	kfree(b);
	luf_kernel_destroy(k);
	return ret < 0 ? ret : 0;
}
module_init(lufdemo_init);
MODULE_LICENSE("Dual MIT/GPL");
"""


def say(msg):
    cli.say("vendor", msg, sys.stdout)


def headers():
    """The /usr/src/linux-headers-*-amd64 directories, oldest first (as sort -V)."""
    return sorted(glob.glob("/usr/src/linux-headers-*-amd64"),
                  key=lambda d: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", d)])


def w1_build(kdir, mdir, log, *args):
    """make -C @kdir M=@mdir W=1 @args modules, its output in the file @log: raises
    Fail (the log on stderr) if it fails, or (its lines on stderr) if any line holds
    "warning:" or "error:"."""
    with open(log, "w") as f:
        rc = cli.run(["make", "-C", kdir, "M=" + mdir, "W=1", *args, "modules"],
                     stdout=f, stderr=subprocess.STDOUT).returncode
    with open(log, errors="replace") as f:
        text = f.read()
    if rc:
        sys.stderr.write(text)
        raise cli.Fail("module build failed in %s" % mdir)
    bad = [l for l in text.splitlines(True) if re.search("warning:|error:", l, re.I)]
    if bad:
        sys.stderr.write("".join(bad))
        raise cli.Fail("W=1 build is not warning-free (%s)" % log)


def copy_core(dst):
    """Copy luf's core (lib/*.c) into the new directory @dst."""
    os.makedirs(dst)
    for c in glob.glob(os.path.join(cli.REPO, "lib", "*.c")):
        shutil.copy(c, dst)


def write(path, text, mode="w"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, mode) as f:
        f.write(text)


def kconfig(tree, kdir):
    """Step 3a: the kernel's Kconfig parser takes the options (if @kdir has it)."""
    conf = os.path.join(kdir, "scripts", "kconfig", "conf")
    if not os.access(conf, os.X_OK):
        say("no %s: Kconfig not checked" % conf)
        return
    # KUNIT as every tree has it (lib/kunit/Kconfig), off: LUF_SELFTEST depends on it.
    write(os.path.join(tree, "Kconfig"), 'mainmenu "luf vendoring check"\nconfig MODULES\n'
          '\tbool "modules"\n\tmodules\n\tdefault y\nconfig KUNIT\n\ttristate "KUnit"\n'
          'source "lib/Kconfig"\n')
    write(os.path.join(tree, "all.config"), "CONFIG_LUF_SELFTEST=m\nCONFIG_LUF_DEBUG=y\n")
    env = dict(os.environ, srctree=tree, KCONFIG_CONFIG=os.path.join(tree, ".config"),
               KCONFIG_ALLCONFIG=os.path.join(tree, "all.config"))
    p = cli.run([conf, "--alldefconfig", "Kconfig"], cwd=tree, env=env,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    write(os.path.join(tree, "kconfig.log"), p.stdout)
    if p.returncode:
        sys.stderr.write(p.stdout)
        raise cli.Fail("Kconfig rejected lib/luf/Kconfig")
    with open(os.path.join(tree, ".config")) as f:
        config = f.read().splitlines()
    for opt in ("CONFIG_LUF_SELFTEST=m", "CONFIG_LUF_DEBUG=y"):
        if opt not in config:
            raise cli.Fail("%s not taken" % opt)
    say("Kconfig: CONFIG_LUF_SELFTEST=m CONFIG_LUF_DEBUG=y accepted")


def check(tree, kdir):
    """The guide's steps in the scratch directory @tree (emptied first), built
    against the kernel headers @kdir, then says PASS; raises Fail at the first
    step that fails."""
    shutil.rmtree(tree, ignore_errors=True)
    luf = os.path.join(tree, "lib", "luf")
    # Step 1, as the guide says (cp -r include/luf, lib/*.c, the module's files).
    shutil.copytree(os.path.join(cli.REPO, "include", "luf"),
                    os.path.join(luf, "include", "luf"), symlinks=True)
    copy_core(os.path.join(luf, "core"))
    for f in [os.path.join(MODULE, "Kbuild"), os.path.join(MODULE, "Kconfig")] + \
            glob.glob(os.path.join(MODULE, "*.[ch]")):
        shutil.copy(f, luf)
    shutil.copytree(os.path.join(MODULE, "shim"), os.path.join(luf, "shim"))
    # Step 2: the two lines the guide adds (the scratch tree has nothing else there).
    write(os.path.join(tree, "lib", "Makefile"), "obj-y += luf/\n", "a")
    write(os.path.join(tree, "lib", "Kconfig"), 'source "lib/luf/Kconfig"\n', "a")
    kconfig(tree, kdir)
    # Step 3b: build lib/ the way the tree would, descending through "obj-y += luf/".
    w1_build(kdir, os.path.join(tree, "lib"), os.path.join(tree, "build-lib.log"),
             "CONFIG_LUF_SELFTEST=m")
    if not os.path.isfile(os.path.join(luf, "luf_selftest.ko")):
        raise cli.Fail("lib/luf/luf_selftest.ko not built")
    try:
        with open(os.path.join(luf, ".luf_kunit.o.cmd"), errors="replace") as f:
            cmd = f.read()
    except OSError:
        cmd = ""
    if "-I%s/lib/luf/include" % tree not in cmd:
        raise cli.Fail("the build did not use the vendored headers")
    say("lib/luf/luf_selftest.ko built from the vendored copy, W=1 clean")
    # Step 4: a driver of one's own, luf_kernel.[ch] copied next to it.
    drv = os.path.join(tree, "drivers", "misc", "lufdemo")
    os.makedirs(drv)
    for f in ("luf_kernel.c", "luf_kernel.h", "luf_core.c"):
        shutil.copy(os.path.join(luf, f), drv)
    # The guide's Makefile says $(srctree)/lib/luf/...; built out of tree, $(srctree)
    # is the headers package, not the scratch tree: the scratch tree's root stands
    # in for it, the one change an in-tree build would not need.
    write(os.path.join(drv, "Makefile"), "# SPDX-License-Identifier: GPL-2.0-only OR MIT\n"
          "ccflags-y += -I{0}/lib/luf/include -I{0}/lib/luf/core\n"
          "obj-$(CONFIG_MYDRIVER) += mydriver.o\n"
          "mydriver-y := main.o luf_kernel.o luf_core.o\n".format(tree))
    write(os.path.join(drv, "main.c"), DRIVER_C)
    w1_build(kdir, drv, os.path.join(tree, "build-drv.log"), "CONFIG_MYDRIVER=m")
    if not os.path.isfile(os.path.join(drv, "mydriver.ko")):
        raise cli.Fail("drivers/misc/lufdemo/mydriver.ko not built")
    say("step 4: a driver with luf_kernel.o in its objects builds W=1 clean")
    say("PASS")


def main(argv):
    if len(argv) != 1 or argv[0].startswith("-"):
        raise cli.Usage("")
    kdir = os.environ.get("KDIR") or (headers() or [None])[-1]
    if not kdir:
        raise cli.Fail("no /usr/src/linux-headers-*-amd64 (and no KDIR)")
    check(os.path.abspath(argv[0]), kdir)
    return 0


if __name__ == "__main__":
    cli.entry(main, "vendor", __doc__)
