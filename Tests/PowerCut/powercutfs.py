#!/usr/bin/python3
"""A FUSE file system that forgets, at a power cut, exactly what the disk had not been told to keep.

    powercutfs.py BACKING MOUNTPOINT CONTROL [--seed N]

It serves the tree in BACKING (loaded into memory at mount) on MOUNTPOINT and remembers, for every
file, the bytes as of its last fsync and the writes and truncations since; for the directories,
every create, link, unlink, mkdir, rmdir and rename since the mount, and which of them an fsync of
a directory they touch has made durable.

A cut is a signal:
  SIGUSR1  strict cut: every byte written and every directory entry changed since the last fsync
           that covers it is lost.
  SIGUSR2  torn cut: what a disk may have written back on its own survives in part. Each pending
           write is kept whole, dropped, or torn (a random subset of its 512-byte sectors), each
           pending truncation kept or dropped, in order; each directory's lost entries are a random
           suffix of the operations that no fsync covered.
The file system freezes at once (every later operation fails with EIO), writes CONTROL/frozen, and
on unmount writes the state after the cut into BACKING. Without a cut, unmounting writes what the
page cache held, like a clean shutdown. CONTROL/ready appears once the mount is up.

Why FUSE: it sees every write, fsync, fdatasync and directory fsync of every process that touches
the store (SQLite's database, WAL and shared memory included) without changing hp-sync, and the
kernel sends it each fsync (it keeps no dirty pages of its own: writeback caching is off).
Written for Debian's python3-pyfuse3 (trio); no code of it comes from elsewhere.
"""

import errno
import os
import random
import shutil
import signal
import stat
import sys
import time

import pyfuse3
import trio

SECTOR = 512
ROOT = pyfuse3.ROOT_INODE


class Node:
    """One inode: a file's bytes or a directory's entries, with its mode and owner."""

    def __init__(self, ino, mode, uid=0, gid=0):
        self.ino = ino
        self.mode = mode
        self.uid = uid
        self.gid = gid
        now = time.time_ns()
        self.atime = self.mtime = self.ctime = now
        self.data = bytearray()  # files: what the page cache holds
        self.durable = b""  # files: the bytes as of the last fsync
        self.pending = []  # files: ("w", offset, bytes) or ("t", size) since the last fsync
        self.links = 0  # files: directory entries naming it
        self.entries = {}  # directories: name -> inode

    @property
    def is_dir(self):
        return stat.S_ISDIR(self.mode)


class MetaOp:
    """A change of directory entries, with the directories it touches."""

    def __init__(self, kind, dirs, args):
        self.kind = kind
        self.dirs = dirs
        self.args = args
        self.durable = False


class PowerCutFS(pyfuse3.Operations):
    def __init__(self, backing, control, seed):
        super().__init__()
        self.backing = backing
        self.control = control
        self.rng = random.Random(seed)
        self.nodes = {}
        self.next_ino = ROOT + 1
        self.meta_log = []
        self.base_tree = {}
        self.frozen = False
        self.after_cut = None  # (tree, {ino: bytes}, {ino: Node}) once a cut happened
        self.load()

    # Loading and saving the backing tree ------------------------------------------------------

    def load(self):
        st = os.lstat(self.backing)
        self.nodes[ROOT] = Node(ROOT, st.st_mode, st.st_uid, st.st_gid)
        self.load_dir(self.backing, self.nodes[ROOT], {})
        self.base_tree = {ino: dict(n.entries) for ino, n in self.nodes.items() if n.is_dir}

    def load_dir(self, path, node, seen):
        for name in sorted(os.listdir(path)):
            full = os.path.join(path, name)
            st = os.lstat(full)
            if st.st_ino in seen:  # a hard link: the same inode under a second name
                child = seen[st.st_ino]
                child.links += 1
                node.entries[os.fsencode(name)] = child.ino
                continue
            child = self.new_node(st.st_mode, st.st_uid, st.st_gid)
            node.entries[os.fsencode(name)] = child.ino
            if child.is_dir:
                self.load_dir(full, child, seen)
            else:
                seen[st.st_ino] = child
                child.links = 1
                with open(full, "rb") as f:
                    child.data = bytearray(f.read())
                child.durable = bytes(child.data)

    def save(self):
        """Writes the state the cut left (or, without a cut, the page cache's) into the backing tree."""
        if self.after_cut is None:
            tree = {ino: n.entries for ino, n in self.nodes.items() if n.is_dir}
            contents = {ino: bytes(n.data) for ino, n in self.nodes.items() if not n.is_dir}
        else:
            tree, contents = self.after_cut
        for name in os.listdir(self.backing):
            full = os.path.join(self.backing, name)
            if os.path.isdir(full) and not os.path.islink(full):
                shutil.rmtree(full)
            else:
                os.unlink(full)
        links = {}
        self.save_dir(ROOT, self.backing, tree, contents, links)
        os.chmod(self.backing, stat.S_IMODE(self.nodes[ROOT].mode))
        os.sync()

    def save_dir(self, ino, path, tree, contents, links):
        for name, child in sorted(tree[ino].items()):
            full = os.path.join(path, os.fsdecode(name))
            node = self.nodes[child]
            if node.is_dir:
                os.mkdir(full)
                self.save_dir(child, full, tree, contents, links)
            elif child in links:
                os.link(links[child], full)
            else:
                with open(full, "wb") as f:
                    f.write(contents[child])
                links[child] = full
            os.chmod(full, stat.S_IMODE(node.mode))
            os.lchown(full, node.uid, node.gid)

    # The cut ------------------------------------------------------------------------------------

    def cut(self, torn):
        """Freezes the file system and works out what a power cut at this instant leaves."""
        self.frozen = True
        tree = {ino: dict(entries) for ino, entries in self.base_tree.items()}
        undurable = [op for op in self.meta_log if not op.durable]
        # A torn cut keeps a random prefix of the entries no fsync covered (a journal commits in order).
        kept = set(map(id, undurable[: self.rng.randint(0, len(undurable))])) if torn else set()
        for op in self.meta_log:
            if op.durable or id(op) in kept:
                self.replay(tree, op)
        contents = {}
        reachable = self.reachable(tree)
        for ino in reachable:
            node = self.nodes[ino]
            if not node.is_dir:
                contents[ino] = self.contents_after_cut(node, torn)
        self.after_cut = ({ino: tree.get(ino, {}) for ino in reachable if self.nodes[ino].is_dir}, contents)
        with open(os.path.join(self.control, "frozen"), "w") as f:
            f.write("torn\n" if torn else "strict\n")

    def replay(self, tree, op):
        a = op.args
        if op.kind in ("create", "mkdir", "link"):
            parent, name, ino = a
            if parent in tree:
                tree[parent][name] = ino
                if op.kind == "mkdir":
                    tree.setdefault(ino, {})
        elif op.kind in ("unlink", "rmdir"):
            parent, name, ino = a
            if parent in tree and tree[parent].get(name) == ino:
                del tree[parent][name]
        elif op.kind == "rename":
            old_parent, old_name, new_parent, new_name, ino = a
            if old_parent in tree and new_parent in tree and tree[old_parent].get(old_name) == ino:
                del tree[old_parent][old_name]
                tree[new_parent][new_name] = ino

    def reachable(self, tree):
        seen, todo = set(), [ROOT]
        while todo:
            ino = todo.pop()
            if ino in seen:
                continue
            seen.add(ino)
            for child in tree.get(ino, {}).values():
                if self.nodes[child].is_dir:
                    tree.setdefault(child, {})
                todo.append(child)
        return seen

    def contents_after_cut(self, node, torn):
        data = bytearray(node.durable)
        if not torn:
            return bytes(data)
        for op in node.pending:
            fate = self.rng.randrange(3)  # 0 dropped, 1 whole, 2 torn
            if fate == 0:
                continue
            if op[0] == "t":
                self.resize(data, op[1])
                continue
            _, offset, buf = op
            if fate == 1:
                self.put(data, offset, buf)
                continue
            first = offset - offset % SECTOR
            for start in range(first, offset + len(buf), SECTOR):
                if self.rng.random() < 0.5:
                    lo, hi = max(start, offset), min(start + SECTOR, offset + len(buf))
                    self.put(data, lo, buf[lo - offset : hi - offset])
        return bytes(data)

    @staticmethod
    def resize(data, size):
        if size < len(data):
            del data[size:]
        else:
            data.extend(b"\0" * (size - len(data)))

    @staticmethod
    def put(data, offset, buf):
        if len(data) < offset:
            data.extend(b"\0" * (offset - len(data)))
        data[offset : offset + len(buf)] = buf

    # Helpers ------------------------------------------------------------------------------------

    def check(self):
        if self.frozen:
            raise pyfuse3.FUSEError(errno.EIO)

    def new_node(self, mode, uid, gid):
        node = Node(self.next_ino, mode, uid, gid)
        self.nodes[node.ino] = node
        self.next_ino += 1
        return node

    def log(self, kind, dirs, *args):
        self.meta_log.append(MetaOp(kind, set(dirs), args))

    def attrs(self, node):
        a = pyfuse3.EntryAttributes()
        a.st_ino = node.ino
        a.st_mode = node.mode
        a.st_nlink = self.link_count(node)
        a.st_uid, a.st_gid = node.uid, node.gid
        a.st_size = 4096 if node.is_dir else len(node.data)
        a.st_blksize = 4096
        a.st_blocks = (a.st_size + 511) // 512
        a.st_atime_ns, a.st_mtime_ns, a.st_ctime_ns = node.atime, node.mtime, node.ctime
        a.generation = 0
        a.entry_timeout = 300
        a.attr_timeout = 300
        return a

    def link_count(self, node):
        if node.is_dir:
            return 2 + sum(1 for c in node.entries.values() if self.nodes[c].is_dir)
        return max(1, node.links)

    def child(self, parent, name):
        ino = self.nodes[parent].entries.get(name)
        if ino is None:
            raise pyfuse3.FUSEError(errno.ENOENT)
        return self.nodes[ino]

    def add_entry(self, parent, name, node, kind):
        entries = self.nodes[parent].entries
        if name in entries:
            raise pyfuse3.FUSEError(errno.EEXIST)
        entries[name] = node.ino
        node.links += 1
        self.log(kind, [parent], parent, name, node.ino)
        self.touch(self.nodes[parent])

    def touch(self, node):
        node.mtime = node.ctime = time.time_ns()

    def record(self, node, op):
        node.pending.append(op)

    # Operations ---------------------------------------------------------------------------------

    async def lookup(self, parent_inode, name, ctx=None):
        self.check()
        if name == b".":
            return self.attrs(self.nodes[parent_inode])
        return self.attrs(self.child(parent_inode, name))

    async def getattr(self, inode, ctx=None):
        self.check()
        return self.attrs(self.nodes[inode])

    async def setattr(self, inode, attr, fields, fh, ctx):
        self.check()
        node = self.nodes[inode]
        if fields.update_size:
            size = attr.st_size
            self.resize(node.data, size)
            self.record(node, ("t", size))
            self.touch(node)
        if fields.update_mode:
            node.mode = stat.S_IFMT(node.mode) | stat.S_IMODE(attr.st_mode)
        if fields.update_uid:
            node.uid = attr.st_uid
        if fields.update_gid:
            node.gid = attr.st_gid
        if fields.update_atime:
            node.atime = attr.st_atime_ns
        if fields.update_mtime:
            node.mtime = attr.st_mtime_ns
        node.ctime = time.time_ns()
        return self.attrs(node)

    async def mknod(self, parent_inode, name, mode, rdev, ctx):
        self.check()
        node = self.new_node(mode, ctx.uid, ctx.gid)
        self.add_entry(parent_inode, name, node, "create")
        return self.attrs(node)

    async def create(self, parent_inode, name, mode, flags, ctx):
        self.check()
        node = self.new_node(stat.S_IFREG | stat.S_IMODE(mode), ctx.uid, ctx.gid)
        self.add_entry(parent_inode, name, node, "create")
        return pyfuse3.FileInfo(fh=node.ino), self.attrs(node)

    async def mkdir(self, parent_inode, name, mode, ctx):
        self.check()
        node = self.new_node(stat.S_IFDIR | stat.S_IMODE(mode), ctx.uid, ctx.gid)
        self.add_entry(parent_inode, name, node, "mkdir")
        return self.attrs(node)

    async def unlink(self, parent_inode, name, ctx):
        self.check()
        node = self.child(parent_inode, name)
        del self.nodes[parent_inode].entries[name]
        node.links -= 1
        self.log("unlink", [parent_inode], parent_inode, name, node.ino)
        self.touch(self.nodes[parent_inode])

    async def rmdir(self, parent_inode, name, ctx):
        self.check()
        node = self.child(parent_inode, name)
        if node.entries:
            raise pyfuse3.FUSEError(errno.ENOTEMPTY)
        del self.nodes[parent_inode].entries[name]
        self.log("rmdir", [parent_inode, node.ino], parent_inode, name, node.ino)
        self.touch(self.nodes[parent_inode])

    async def rename(self, parent_inode_old, name_old, parent_inode_new, name_new, flags, ctx):
        self.check()
        if flags & pyfuse3.RENAME_EXCHANGE:
            raise pyfuse3.FUSEError(errno.EINVAL)
        node = self.child(parent_inode_old, name_old)
        target = self.nodes[parent_inode_new].entries.get(name_new)
        if target is not None:
            if flags & pyfuse3.RENAME_NOREPLACE:
                raise pyfuse3.FUSEError(errno.EEXIST)
            if target == node.ino:
                return
            replaced = self.nodes[target]
            if replaced.is_dir and replaced.entries:
                raise pyfuse3.FUSEError(errno.ENOTEMPTY)
            replaced.links -= 1
        del self.nodes[parent_inode_old].entries[name_old]
        self.nodes[parent_inode_new].entries[name_new] = node.ino
        self.log(
            "rename", [parent_inode_old, parent_inode_new], parent_inode_old, name_old, parent_inode_new, name_new,
            node.ino)
        self.touch(self.nodes[parent_inode_old])
        self.touch(self.nodes[parent_inode_new])

    async def link(self, inode, new_parent_inode, new_name, ctx):
        self.check()
        node = self.nodes[inode]
        self.add_entry(new_parent_inode, new_name, node, "link")
        return self.attrs(node)

    async def open(self, inode, flags, ctx):
        self.check()
        node = self.nodes[inode]
        if flags & os.O_TRUNC and node.data:
            node.data.clear()
            self.record(node, ("t", 0))
        return pyfuse3.FileInfo(fh=inode)

    async def read(self, fh, off, size):
        self.check()
        return bytes(self.nodes[fh].data[off : off + size])

    async def write(self, fh, off, buf):
        self.check()
        node = self.nodes[fh]
        self.put(node.data, off, buf)
        self.record(node, ("w", off, bytes(buf)))
        self.touch(node)
        return len(buf)

    async def fsync(self, fh, datasync):
        self.check()
        node = self.nodes[fh]
        node.durable = bytes(node.data)
        node.pending = []

    async def opendir(self, inode, ctx):
        self.check()
        return inode

    async def readdir(self, fh, start_id, token):
        self.check()
        entries = sorted(self.nodes[fh].entries.items())
        for index in range(start_id, len(entries)):
            name, ino = entries[index]
            if not pyfuse3.readdir_reply(token, name, self.attrs(self.nodes[ino]), index + 1):
                break

    async def fsyncdir(self, fh, datasync):
        self.check()
        for op in self.meta_log:
            if fh in op.dirs:
                op.durable = True

    async def releasedir(self, fh):
        pass

    async def release(self, fh):
        pass

    async def flush(self, fh):
        pass

    async def forget(self, inode_list):
        pass

    async def access(self, inode, mode, ctx):
        self.check()
        return True

    async def statfs(self, ctx):
        s = pyfuse3.StatvfsData()
        s.f_bsize = s.f_frsize = 4096
        s.f_blocks = s.f_bfree = s.f_bavail = 1 << 24
        s.f_files = s.f_ffree = s.f_favail = 1 << 20
        s.f_namemax = 255
        return s


async def serve(fs):
    async with trio.open_nursery() as nursery:
        async def cuts():
            with trio.open_signal_receiver(signal.SIGUSR1, signal.SIGUSR2) as signals:
                async for signum in signals:
                    if not fs.frozen:
                        fs.cut(torn=signum == signal.SIGUSR2)

        nursery.start_soon(cuts)
        await pyfuse3.main()
        nursery.cancel_scope.cancel()


def main():
    args = sys.argv[1:]
    seed = 0
    if "--seed" in args:
        i = args.index("--seed")
        seed = int(args[i + 1])
        del args[i : i + 2]
    backing, mountpoint, control = args
    fs = PowerCutFS(backing, control, seed)
    options = set(pyfuse3.default_options)
    options.add("fsname=powercutfs")
    options.add("allow_other")
    pyfuse3.init(fs, mountpoint, options)
    with open(os.path.join(control, "ready"), "w") as f:
        f.write(f"{os.getpid()}\n")
    try:
        trio.run(serve, fs)
    finally:
        pyfuse3.close(unmount=False)
    fs.save()


if __name__ == "__main__":
    main()
