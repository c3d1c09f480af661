# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""Unit tests of ktool.boot's pure parts: the options, the machine a kernel's .config
asks for, the QEMU command line, the guest's /init (no QEMU, no kernel)."""
import os
import tempfile
import types
import unittest
import unittest.mock

from . import boot, cli

MICROVM_CONFIG = ("# CONFIG_PCI is not set\nCONFIG_VIRTIO_MMIO=y\n"
                  "CONFIG_VIRTIO_MMIO_CMDLINE_DEVICES=y\n")


class Boot(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.kernel = os.path.join(self.tmp.name, "bzImage")
        open(self.kernel, "w").close()

    def tearDown(self):
        self.tmp.cleanup()

    def opts(self, *args):
        return boot.options(["--kernel", self.kernel] + list(args))

    def usage(self, *args):
        with self.assertRaises(cli.Usage) as c:
            self.opts(*args)
        return str(c.exception)

    def refused(self, *args):
        with self.assertRaises(cli.Fail) as c:
            self.opts(*args)
        return str(c.exception)

    def test_options(self):
        o = self.opts()
        self.assertEqual((o.workload, o.kunit, o.disk_mb, o.passes, o.seconds, o.smp, o.mem,
                          o.threads, o.machine, o.timeout), ("none", False, 768, 2, 90, 4, "256M",
                                                             None, "pc", 300))
        o = self.opts("--workload", "kunit", "--append", "a", "--append", "b c")
        self.assertEqual((o.workload, o.kunit, o.append, o.timeout), ("none", True, "a b c", 900))
        self.assertEqual(self.opts("--workload", "checker", "--seconds", "20").timeout, 420)
        self.assertEqual(self.opts("--workload", "reclaim", "--threads", "2", "--passes", "1",
                                   "--disk-mb", "400").timeout, 800)
        self.assertEqual(self.opts("--workload", "mixed", "--timeout", "7").timeout, 7)
        # WORKLOAD-ext4: WORKLOAD's program and timeout, over ext4.
        o = self.opts("--workload", "checker-ext4", "--seconds", "20")
        self.assertEqual((o.base, o.fs, o.timeout), ("checker", "ext4", 420))
        self.assertEqual((self.opts("--workload", "coherence").fs), "")
        o = self.opts("--workload", "pageout")
        self.assertEqual((o.mem, o.disk_mb), ("1536M", 1100))
        # peers: reclaim-ext4's file system as the pressure, its own limit.
        o = self.opts("--workload", "peers")
        self.assertEqual((o.base, o.fs, o.swap, o.timeout), ("peers", "ext4", "", 1500))
        o = self.opts("--workload", "pageout", "--mem", "1G", "--disk-mb", "900")
        self.assertEqual((o.mem, o.disk_mb), ("1G", 900))

    def test_numa_nodes(self):
        """migrate's two nodes: --mem each, the CPUs split, node 1 CPU-less with one."""
        mem, smp, opts = boot.numa_nodes("256M", 4)
        self.assertEqual((mem, smp), ("512M", "4,sockets=4,cores=1,threads=1"))
        self.assertEqual(opts, ["-object", "memory-backend-ram,id=n0,size=256M",
                                "-numa", "node,nodeid=0,cpus=0-1,memdev=n0",
                                "-object", "memory-backend-ram,id=n1,size=256M",
                                "-numa", "node,nodeid=1,cpus=2-3,memdev=n1"])
        mem, smp, opts = boot.numa_nodes("1G", 1)
        self.assertEqual((mem, smp, opts[3], opts[7]), (
            "2048M", "1,sockets=1,cores=1,threads=1", "node,nodeid=0,cpus=0-0,memdev=n0",
            "node,nodeid=1,memdev=n1"))

    def test_bad_options(self):
        self.assertEqual(self.usage("--workload", "x"), "boot: unknown workload 'x' (none reclaim "
                         "mixed checker coherence offline idle pageout oom hotpath kunit "
                         "reclaim-ext4 checker-ext4 coherence-ext4 reclaim-tmpfs reclaim-anon "
                         "coherence-anon coherence-tmpfs peers migrate tier)")
        mem = "boot: --mem wants a size in M or G (256M, 1G), not '%s'"
        for args, msg in (
                (("reclaim-anon", "--disk-mb", "7"), "boot: reclaim-anon wants --disk-mb 8 or "
                 "more (its swap; 3/4 of it is the data)"),
                (("migrate", "--mem", "256"), mem % "256"),
                (("reclaim", "--mem", "10X"), mem % "10X"),
                # migrate and tier take their options in --wargs; migrate needs a CPU
                # per node.
                (("tier", "--seconds", "5", "--threads", "2"), "boot: tier does not use "
                 "--seconds --threads (its program's options go in --wargs: see guest/tier.c)"),
                (("migrate", "--disk-mb", "64"), "boot: migrate does not use --disk-mb (its "
                 "program's options go in --wargs: see guest/migrate.c)"),
                (("migrate", "--smp", "1"), "boot: migrate wants --smp 2 or more (a CPU on "
                 "each node)")):
            self.assertEqual(self.usage("--workload", *args), msg, args)
        self.assertEqual(self.opts("--workload", "migrate", "--smp", "2").smp, 2)
        self.assertEqual(self.opts("--workload", "tier", "--disk-mb", "900").disk_mb, 900)
        self.assertEqual(self.usage("--machine", "q35"),
                         "boot: --machine wants pc or microvm, got 'q35'")
        for n in ("0", "01", "-1", "1.5", "x", ""):
            self.assertIn("boot: ", self.usage("--smp", n))
        self.assertEqual(self.usage("--threads", "0"), "boot: not a positive integer: 0")
        self.assertEqual(self.usage("--nope"), "boot: unknown argument: --nope")
        self.assertEqual(self.usage("--kernel"), "boot: --kernel wants a value")
        self.assertEqual(self.opts("--wargs", "", "--append", "").wargs, "")
        with self.assertRaises(cli.Usage):
            boot.options([])
        self.assertEqual(self.refused("--wargs", "-x"), "--wargs needs a workload")
        self.assertIn("pc machine only", self.refused("--machine", "microvm", "--workload", "oom"))
        self.assertIn("--trace needs the pc machine",
                      self.refused("--machine", "microvm", "--trace", "t.gz"))
        with self.assertRaises(cli.Fail):
            boot.options(["--kernel", self.kernel + ".none"])

    def test_machine(self):
        self.assertEqual(boot.auto_machine(MICROVM_CONFIG), "microvm")
        self.assertEqual(boot.auto_machine(MICROVM_CONFIG + "CONFIG_PCI=y\n"), "pc")
        self.assertEqual(boot.auto_machine("# CONFIG_PCI is not set\n"), "pc")
        self.assertEqual(boot.auto_machine("CONFIG_VIRTIO_MMIO_CMDLINE_DEVICES=m\n"), "pc")
        self.assertEqual(self.opts().machine, "pc")  # no .config beside it
        os.makedirs(os.path.join(self.tmp.name, "src", "out"))
        with open(os.path.join(self.tmp.name, "src", "out", ".config"), "w") as f:
            f.write(MICROVM_CONFIG)
        self.assertEqual(self.opts().machine, "microvm")
        self.assertEqual(self.opts("--machine", "pc", "--workload", "oom").machine, "pc")
        self.assertIn("pc machine only", self.refused("--workload", "coherence"))
        # An unknown workload is a usage error on either machine (record relies on it).
        with self.assertRaises(cli.Usage):
            self.opts("--workload", "nosuch")
        o = boot.options(["--check-console", self.kernel])  # boots nothing: pc
        self.assertEqual((o.machine, o.workload), ("pc", "none"))

    def test_plan(self):
        cmd, argv, disks = boot.plan(self.opts("--workload", "reclaim", "--append", "x=1"), "/w")
        self.assertEqual(cmd, "/bin/reclaim --threads 4 --passes 2")
        self.assertEqual(argv, [
            "timeout", "-k", "10", "2136", "qemu-system-x86_64", "-accel", "tcg", "-smp", "4",
            "-m", "256M", "-nographic", "-no-reboot", "-monitor", "none", "-nic", "none",
            "-serial", "file:/w/console.raw", "-serial", "file:/w/results.raw",
            "-kernel", self.kernel, "-initrd", "/w/initramfs.cpio.gz", "-append",
            "console=ttyS0 loglevel=7 panic=-1 oops=panic rdinit=/init x=1",
            "-drive", "file=/w/disk.img,format=raw,if=virtio,cache=unsafe"])
        self.assertEqual(disks, {"/w/disk.img": 768})
        cmd, argv, disks = boot.plan(self.opts("--workload", "checker", "--machine", "microvm",
                                               "--wargs", "--hot-pages 8"), "/w", "/c/s.img")
        self.assertEqual(cmd, "/bin/checker --seconds 90 --hot-pages 8")
        self.assertEqual(argv[argv.index("-append") + 1:], [
            "console=ttyS0 loglevel=7 panic=-1 oops=panic rdinit=/init reboot=t",
            "-drive", "file=/c/s.img,format=raw,if=none,id=lufd1,cache=unsafe,snapshot=on",
            "-device", "virtio-blk-device,drive=lufd1"])
        self.assertIn("isa-serial,chardev=lufres,index=1", argv)
        self.assertEqual(disks, {})
        cmd, argv, disks = boot.plan(self.opts("--workload", "offline", "--smp", "2"), "/w")
        self.assertEqual(argv[argv.index("-m") + 1], "256M,slots=2,maxmem=1G")
        self.assertTrue(argv[argv.index("-append") + 1].endswith(
            "rdinit=/init memhp_default_state=offline isolcpus=1 luf.idle_ms=0"))
        self.assertEqual(argv[-4:], ["-object", "memory-backend-ram,id=m1,size=128M",
                                     "-device", "pc-dimm,id=d1,memdev=m1"])
        cmd, argv, disks = boot.plan(self.opts("--workload", "coherence"), "/w")
        self.assertEqual(len(disks), 8)
        self.assertEqual(disks["/w/fs.img"], 64)
        self.assertEqual(argv.count("file=/w/shared.img,format=raw,if=virtio,cache=unsafe,"
                                    "file.locking=off"), 2)
        self.assertIn("file=/w/nvme.img,format=raw,if=none,id=nvm,cache=unsafe", argv)
        cmd, argv, disks = boot.plan(self.opts("--workload", "coherence-ext4"), "/w", "/c/e.img")
        self.assertEqual(cmd, "/bin/coherence --dev /mnt/data --writers pwrite,map,dio,punch,"
                         "truncate")
        self.assertIn("file=/c/e.img,format=raw,if=virtio,cache=unsafe,snapshot=on", argv)
        self.assertEqual((disks, argv.count("-drive")), ({}, 1))
        cmd, _, disks = boot.plan(self.opts("--workload", "reclaim-ext4"), "/w", "/c/e.img")
        self.assertEqual((cmd, disks), ("/bin/reclaim --threads 4 --passes 2 --dev /mnt/data", {}))
        # Swap-backed: the scratch disk is the swap; 3/4 of it is the data.
        cmd, _, disks = boot.plan(self.opts("--workload", "reclaim-tmpfs", "--disk-mb", "400"),
                                  "/w")
        self.assertEqual((cmd, disks), ("/bin/reclaim --threads 4 --passes 2 --fill 300 --dev "
                                        "/mnt/data", {"/w/disk.img": 400}))
        o = self.opts("--workload", "reclaim-anon")
        self.assertEqual((o.base, o.fs, o.swap), ("reclaim", "", "anon"))
        cmd, _, disks = boot.plan(o, "/w")
        self.assertEqual((cmd, disks), ("/bin/reclaim --threads 3 --passes 2 --anon 576",
                                        {"/w/disk.img": 768}))
        cmd, argv, disks = boot.plan(self.opts("--workload", "coherence-anon"), "/w")
        self.assertEqual((cmd, disks), ("/bin/coherence --writers anon", {"/w/disk.img": 768}))
        self.assertTrue(argv[argv.index("-append") + 1].endswith("isolcpus=3 luf.idle_ms=0"))
        # coherence-tmpfs: a sparse file on the tmpfs, made by the init script.
        cmd, argv, disks = boot.plan(self.opts("--workload", "coherence-tmpfs"), "/w")
        self.assertEqual(cmd, "/bin/coherence --dev /mnt/data --writers " + boot.TMPFS_WRITERS)
        self.assertIn("truncate -s %dM /mnt/data" % boot.TMPFS_FILE_MB,
                      boot.init_text(cmd, False, swap="tmpfs"))
        # peers: reclaim-ext4's image as /dev/vda, the suites' as /dev/vdb, both snapshots.
        cmd, argv, disks = boot.plan(self.opts("--workload", "peers"), "/w", "/c/e.img",
                                     "/c/p.img")
        self.assertEqual((cmd, disks), ("/bin/peers --dev /mnt/data", {}))
        self.assertEqual([argv[i + 1] for i, a in enumerate(argv) if a == "-drive"], [
            "file=/c/e.img,format=raw,if=virtio,cache=unsafe,snapshot=on",
            "file=/c/p.img,format=raw,if=virtio,cache=unsafe,snapshot=on"])
        self.assertTrue(argv[argv.index("-append") + 1].endswith("rdinit=/init"))
        self.assertIn("pc machine only", self.refused("--machine", "microvm", "--workload",
                                                      "peers"))
        cmd, argv, _ = boot.plan(self.opts("--trace", "t.gz", "--workload", "hotpath"), "/w")
        self.assertIn("file,id=luftrace,path=/w/trace.raw", argv)
        self.assertEqual(cmd, "/bin/hotpath")

    def test_init_swap(self):
        """The swap workloads swap on the disk first, tmpfs's also mount a tmpfs; a
        failed step is a set-up error."""
        anon, tmpfs = boot.init_text("c", False, swap="anon"), boot.init_text("c", False,
                                                                              swap="tmpfs")
        self.assertIn('mkswap /dev/vda >/dev/null && swapon /dev/vda || r "@@setup_error '
                      'cannot swap on /dev/vda"', anon)
        self.assertNotIn("mount -t tmpfs -o size=0", anon)
        self.assertIn('mount -t tmpfs -o size=0 tmpfs /mnt || r "@@setup_error cannot mount '
                      'a tmpfs on /mnt"', tmpfs)
        self.assertLess(tmpfs.index("swapon"), tmpfs.index("snap before"))
        self.assertNotIn("swapon", boot.init_text("c", False, fs="ext4"))

    def test_ext4_image(self):
        """Made once per recipe, from the signature image, replacing the size's images
        of other recipes; a failed mkfs leaves nothing behind."""
        cache = self.tmp.name
        sig = os.path.join(cache, "disks", "sig-8M-k.img")
        os.makedirs(os.path.dirname(sig))
        with open(sig, "wb") as f:
            f.write(b"s" * 4096)
        made, fail = [], []

        def run(argv, **kw):
            made.append(argv)
            with open(argv[-2], "wb") as f:  # the image: mkfs_ext4_argv()'s last but one
                f.write(b"e")
            return types.SimpleNamespace(returncode=1 if fail else 0)
        stale = sig[:-4] + "-ext4-0123456789ab.img"
        open(stale, "w").close()
        with unittest.mock.patch.object(boot, "signature_image", lambda c, g, mb: sig), \
                unittest.mock.patch.object(boot.cli, "run", run), \
                unittest.mock.patch.object(boot.shutil, "which", lambda x: "/sbin/mkfs.ext4"), \
                unittest.mock.patch.object(boot, "say", lambda m: None):
            img = boot.ext4_image(cache, "g", 8)
            self.assertEqual(boot.ext4_image(cache, "g", 8), img)
            self.assertEqual(len(made), 1)
            self.assertEqual(made[0][:2] + made[0][-2:], ["/sbin/mkfs.ext4", "-q",
                                                          img + ".tmp", "89M"])
            self.assertRegex(img, r"sig-8M-k-ext4-[0-9a-f]{12}\.img$")
            self.assertFalse(os.path.exists(stale))
            with unittest.mock.patch.dict(os.environ, {"MKE2FS_CONFIG": sig}):
                fail.append(1)
                with self.assertRaises(cli.Fail):
                    boot.ext4_image(cache, "g", 8)
            self.assertEqual(sorted(os.listdir(os.path.dirname(sig))), ["lock", "sig-8M-k.img"])

    def test_peers_image(self):
        """The suites, the libraries ldd names and the extras at their host paths, the
        libraries' directories, an empty /work; made once per content, replacing the
        peers images of other contents; what is missing fails."""
        root, cache = (os.path.join(self.tmp.name, d) for d in ("host", "cache"))
        host = {"/usr/bin/fio": "F", "/usr/bin/stress-ng": "S", "/lib64/ld.so": "L",
                "/lib/libgcc_s.so.1": "G", "/lib/libc.so.6": "C", "/usr/lib/ceph/libx.so": "X"}
        for path, data in host.items():
            os.makedirs(os.path.dirname(root + path), exist_ok=True)
            with open(root + path, "w") as f:
                f.write(data)
            os.chmod(root + path, 0o755)
        ldd = {"/usr/bin/fio": "\tlinux-vdso.so.1 (0x00007ffd)\n\tlibc.so.6 => %s/lib/libc.so.6 "
                               "(0x00007f69)\n\t%s/lib64/ld.so (0x00007f6a)\n" % (root, root),
               "/usr/bin/stress-ng": "\tlibx.so => %s/usr/lib/ceph/libx.so (0x00007f27)\n" % root}
        made, staged = [], {}

        def run(argv, **kw):  # mkfs.ext4: what it was given, {path: text; empty dir/: None}
            made.append(argv)
            src = argv[argv.index("-d") + 1]
            staged.clear()
            for top, dirs, files in os.walk(src):
                rel = os.path.relpath(top, src)
                if not dirs and not files:
                    staged[rel + "/"] = None
                for n in files:
                    with open(os.path.join(top, n)) as f:
                        staged[os.path.normpath(os.path.join(rel, n))] = f.read()
            with open(argv[-2], "wb") as f:
                f.write(b"e")
            return types.SimpleNamespace(returncode=0)
        with unittest.mock.patch.object(boot, "PEERS", (root + "/usr/bin/fio",
                                                        root + "/usr/bin/stress-ng")), \
                unittest.mock.patch.object(boot, "PEERS_EXTRA", (root + "/lib64/ld.so",
                                                                 root + "/lib/libgcc_s.so.1")), \
                unittest.mock.patch.object(boot.cli, "output",
                                           lambda argv: ldd[argv[1][len(root):]]), \
                unittest.mock.patch.object(boot.cli, "run", run), \
                unittest.mock.patch.object(boot.shutil, "which", lambda x: "/sbin/mkfs.ext4"), \
                unittest.mock.patch.object(boot, "say", lambda m: None):
            img = boot.peers_image(cache)
            self.assertRegex(img, r"/cache/disks/peers-[0-9a-f]{12}\.img$")
            self.assertEqual(boot.peers_image(cache), img)
            self.assertEqual(len(made), 1)
            self.assertEqual(made[0][-4:], ["-d", made[0][-3], img + ".tmp", "531M"])
            self.assertEqual(made[0][made[0].index("-N") + 1], "256")
            top = root.lstrip("/")
            self.assertEqual(staged, dict({top + p: d for p, d in host.items()}, **{
                "work/": None, "library-path": "%s/lib:%s/lib64:%s/usr/lib/ceph\n"
                % (root, root, root)}))
            # A library changed: a new image, the old one gone.
            with open(root + "/lib/libc.so.6", "w") as f:
                f.write("C2")
            img2 = boot.peers_image(cache)
            self.assertNotEqual(img2, img)
            self.assertEqual(sorted(os.listdir(os.path.dirname(img))),
                             ["lock", os.path.basename(img2)])
            ldd["/usr/bin/fio"] = "\tlibnuma.so.1 => not found\n"
            with self.assertRaises(cli.Fail) as c:
                boot.peers_image(cache)
            self.assertIn("libnuma.so.1 => not found", str(c.exception))
            os.remove(root + "/usr/bin/stress-ng")
            with self.assertRaises(cli.Fail) as c:
                boot.peers_image(cache)
            self.assertEqual(str(c.exception), "no %s/usr/bin/stress-ng (scripts/deps.sh "
                             "kernel)" % root)

    def test_init(self):
        self.assertIn("\nmkdir -p /mnt && mount -t ext4 -o data=ordered /dev/vda /mnt || ",
                      boot.init_text("/bin/reclaim", False, "ext4"))
        peers = boot.init_text("/bin/peers", False, "ext4", peers=True)
        self.assertIn("/mnt || r \"@@setup_error cannot mount /dev/vda (ext4)\"\nmkdir -p /peers "
                      "&& mount -t ext4 -o data=ordered /dev/vdb /peers || r \"@@setup_error "
                      "cannot mount /dev/vdb (the peers image)\"\n", peers)
        self.assertLess(peers.index("/dev/vdb"), peers.index("snap before"))
        self.assertNotIn("/dev/vdb", boot.init_text("/bin/reclaim", False, "ext4"))
        self.assertNotIn("mount -t ext4", boot.init_text("/bin/reclaim", False))
        text = boot.init_text("/bin/offline --idle", False)
        self.assertTrue(text.startswith("#!/bin/busybox sh\n"))
        self.assertTrue(text.endswith("\nreboot -f\n"))
        self.assertEqual(text.count("/bin/offline --idle"), 4)
        self.assertIn('\t/bin/offline --idle >&3 2>&3\n\trc=$?\n', text)
        self.assertIn("\nr() { echo \"$@\" >&3; }\n", text)
        self.assertNotIn("%", text)
        self.assertNotIn("tracing", text)
        self.assertIn('\nr "@@info cmdline=$(cat /proc/cmdline)"\n\nsnap before\n', text)
        self.assertIn('\nr "@@snap $1 $(cut -d\' \' -f1 /proc/uptime)"', text.replace("\t", ""))
        self.assertIn(r"'s/^MemTotal: *\([0-9]*\).*/\1/p'", text)
        traced = boot.init_text("", True)
        self.assertIn("\nT=/sys/kernel/tracing\n", traced)
        self.assertIn("echo 'p:luf/unmap try_to_unmap_one folio=%di:x64 mm=+16(%si):x64 "
                      "vmflags=+32(%si):x64' >> $T/kprobe_events || r \"@@trace_error kprobe "
                      "unmap\"\n", traced)
        self.assertIn('echo 1 > $T/tracing_on\nsnap before\n', traced)
        self.assertIn('\nr "@@trace lost=$lost"\nsnap after\n', traced)
        self.assertIn('if [ -n "" ]; then\n\t >&3 2>&3\n', traced)
        self.assertEqual(traced.count("@@trace_error"), 8)


if __name__ == "__main__":
    unittest.main()

    def test_keep_results(self):
        # A failed boot keeps its console and results, not its disks or initramfs.
        work = os.path.join(self.tmp.name, "luf-boot.x")
        os.makedirs(os.path.join(work, "initramfs", "bin"))
        names = list(boot.KEPT) + ["disk.img", "shared.img", "initramfs.cpio.gz", "trace.raw"]
        for n in names:
            open(os.path.join(work, n), "w").close()
        os.symlink("/", os.path.join(work, "link"))
        boot.keep_results(work)
        self.assertEqual(sorted(os.listdir(work)), sorted(boot.KEPT))
        self.assertTrue(os.path.isdir("/"))
