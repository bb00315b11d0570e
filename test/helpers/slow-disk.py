#!/usr/bin/python3
"""A slow disk for tests: a FUSE passthrough of ROOT at MOUNT on which closing a
file under SLOW_PREFIX takes DELAY seconds, as on a network filesystem that
writes a file back when it is closed (NFS) or a busy disk; every other
operation passes straight through.

The delay is in FUSE's flush, which the kernel sends on close(2) without
holding the file's inode lock, so an unlink of the same file meanwhile goes
through at once, as on a local disk. (A delay in fsync would not do: FUSE holds
the inode lock through fsync, which would hold up that unlink too, unlike ext4.)

Usage: slow-disk.py ROOT MOUNT DELAY SLOW_PREFIX   (stays in the foreground; unmount with fusermount3 -u)
Needs Debian's python3-fusepy and fuse3.
"""
import errno
import os
import sys
import time

from fusepy import FUSE, FuseOSError, Operations


class SlowClose(Operations):
    # libfuse's high-level API holds a lock on a file's path through every call made with that path,
    # so an unlink would wait for a slow flush. Calls on an open file get no path (and take no lock),
    # as the kernel itself does; the name a file was opened under is kept by handle instead.
    flag_nullpath_ok = True
    flag_nopath = True
    use_ns = True

    def __init__(self, root, delay, slow_prefix):
        self.root = os.path.realpath(root)
        self.delay = delay
        self.slow_prefix = slow_prefix
        self.opened = {}
        self.dirs = {}
        self.dirs_opened = 0

    def _real(self, path):
        return os.path.join(self.root, path.lstrip('/'))

    def __call__(self, op, path, *args):
        # OSError from os.* carries the errno the kernel should see.
        try:
            return super().__call__(op, path, *args)
        except OSError as e:
            raise FuseOSError(e.errno or errno.EIO) from e

    def getattr(self, path, fh=None):
        st = os.lstat(self._real(path)) if path is not None else os.fstat(fh)
        keys = ('st_mode', 'st_ino', 'st_dev', 'st_nlink', 'st_uid', 'st_gid', 'st_size', 'st_atime', 'st_mtime', 'st_ctime')
        out = {k: getattr(st, k) for k in keys}
        out.update(st_atime=st.st_atime_ns, st_mtime=st.st_mtime_ns, st_ctime=st.st_ctime_ns)
        return out

    def access(self, path, mode):
        if not os.access(self._real(path), mode):
            raise FuseOSError(errno.EACCES)

    def opendir(self, path):
        self.dirs_opened += 1
        self.dirs[self.dirs_opened] = path
        return self.dirs_opened

    def readdir(self, path, fh):
        return ['.', '..'] + os.listdir(self._real(self.dirs[fh] if path is None else path))

    def releasedir(self, path, fh):
        self.dirs.pop(fh, None)
        return 0

    def readlink(self, path):
        return os.readlink(self._real(path))

    def statfs(self, path):
        sv = os.statvfs(self._real(path))
        keys = ('f_bavail', 'f_bfree', 'f_blocks', 'f_bsize', 'f_favail', 'f_ffree', 'f_files', 'f_flag', 'f_frsize', 'f_namemax')
        return {k: getattr(sv, k) for k in keys}

    def chmod(self, path, mode):
        os.chmod(self._real(path), mode)

    def chown(self, path, uid, gid):
        os.lchown(self._real(path), uid, gid)

    def utimens(self, path, times=None):
        os.utime(self._real(path), ns=times, follow_symlinks=False) if times else os.utime(self._real(path), follow_symlinks=False)

    def mkdir(self, path, mode):
        os.mkdir(self._real(path), mode)

    def rmdir(self, path):
        os.rmdir(self._real(path))

    def unlink(self, path):
        os.unlink(self._real(path))

    def symlink(self, target, source):
        os.symlink(source, self._real(target))

    def link(self, target, source):
        os.link(self._real(source), self._real(target))

    def rename(self, old, new):
        os.rename(self._real(old), self._real(new))

    def open(self, path, flags):
        fh = os.open(self._real(path), flags)
        self.opened[fh] = path
        return fh

    def create(self, path, mode, fi=None):
        fh = os.open(self._real(path), os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        self.opened[fh] = path
        return fh

    def read(self, path, size, offset, fh):
        return os.pread(fh, size, offset)

    def write(self, path, data, offset, fh):
        return os.pwrite(fh, data, offset)

    def truncate(self, path, length, fh=None):
        if path is not None:
            os.truncate(self._real(path), length)
        else:
            os.ftruncate(fh, length)

    def flush(self, path, fh):
        if self.opened.get(fh, '').startswith(self.slow_prefix):
            time.sleep(self.delay)
        return 0

    def release(self, path, fh):
        self.opened.pop(fh, None)
        os.close(fh)
        return 0

    def fsync(self, path, datasync, fh):
        if datasync:
            os.fdatasync(fh)
        else:
            os.fsync(fh)
        return 0


if __name__ == '__main__':
    root, mount, delay, prefix = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
    # hard_remove: an unlinked file that is still open goes at once, as on a local disk (libfuse would
    # otherwise rename it to .fuse_hidden… until its last close).
    FUSE(SlowClose(root, delay, prefix), mount, foreground=True, nothreads=False, hard_remove=True)
