/*
 * durableWrite(target, chunks, callback) -> undefined
 *
 * A small upload's staging file written and made durable in one job on
 * libuv's thread pool: open (when target is a path: a new file, O_EXCL,
 * mode 0666 less the umask, as node:fs's 'wx'), writev until every byte of
 * `chunks` (an array of Uint8Arrays) is written, fsync, fstat, close. When
 * target is a descriptor (a file created earlier) the job starts at the
 * writev. The descriptor is closed whatever happens.
 *
 * callback(null, { ino, size, mtimeNs, mtimeMs, mode }): the file's stats
 * (bigints, as node:fs's { bigint: true }; mode a number). callback(error):
 * a system error shaped as node:fs's (code 'EEXIST', errno, syscall,
 * path), so the caller maps it as it maps those.
 *
 * renameNoReplaceSync(from, to) -> undefined
 *
 * rename(2) that never replaces (renameat2 with RENAME_NOREPLACE): `to`
 * gets the file only while nothing is there (EEXIST otherwise, and both
 * names stay), and `from` goes in the same step. A staged upload takes its
 * name so where link(2) and then unlink(2) took two trips. It runs on the
 * calling thread: a rename in the data dir is a metadata step like the
 * lstats of the confinement walk, which run on the event loop already, and
 * queued it cost the wake-ups of a pool trip besides. Throws a system
 * error as above; EINVAL (or ENOSYS) where the file system or the kernel
 * cannot, for the caller to fall back to link.
 *
 * openNoLinksSync(path) -> fd, or minus the errno
 *
 * The file at an absolute path opened for reading (O_RDONLY, O_NOFOLLOW,
 * O_NONBLOCK, O_CLOEXEC) by openat2 with RESOLVE_NO_SYMLINKS: the kernel
 * refuses a symbolic link in any component, so a path made of a real user
 * root and checked names that opens is confined with nothing else to check,
 * and no link swapped in meanwhile can redirect it. One system call where
 * the confinement walk took an lstat of every folder on the way and of the
 * name, each walking the whole path again, before the open. Any failure is
 * returned, not thrown (ELOOP for a link, ENOENT, ENOTDIR, and ENOSYS,
 * EPERM or EINVAL where the kernel or a seccomp filter has no openat2): the
 * caller then takes the walk, which says what is there.
 *
 * Why native: node:fs takes every call through the pool on its own, a
 * wake-up of a pool thread and then of the event loop each, which costs a
 * 4 KiB upload more CPU and latency than the calls themselves
 * (docs/performance.md, "One trip through the thread pool").
 * src/storage/local/fs-ops.ts holds the same steps on node:fs for
 * when this module is not built.
 */
#define NAPI_VERSION 8
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#else
/* Kernel headers older than 5.6: the kernel's own layout (include/uapi/linux/openat2.h). */
struct open_how {
  unsigned long long flags, mode, resolve;
};
#define RESOLVE_NO_MAGICLINKS 0x02
#define RESOLVE_NO_SYMLINKS 0x04
#endif
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#include <node_api.h>
#include <uv.h>

typedef struct {
  napi_async_work work;
  napi_ref callback;
  char *to; /* renameNoReplaceSync's destination; NULL for durableWrite */
  napi_ref chunks; /* keeps the chunks' memory alive while the job runs */
  struct iovec *iov;
  size_t niov;
  char *path; /* NULL when the target is a descriptor */
  int fd;
  int err;
  const char *syscall;
  struct stat st;
} job;

static void free_job(napi_env env, job *j) {
  if (j->callback) napi_delete_reference(env, j->callback);
  if (j->chunks) napi_delete_reference(env, j->chunks);
  if (j->work) napi_delete_async_work(env, j->work);
  free(j->iov);
  free(j->path);
  free(j->to);
  free(j);
}

static void fail(job *j, const char *syscall) {
  j->err = errno;
  j->syscall = syscall;
  if (j->fd >= 0) close(j->fd);
  j->fd = -1;
}

static void execute(napi_env env, void *data) {
  (void)env;
  job *j = data;
  if (j->path) {
    do j->fd = open(j->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    while (j->fd < 0 && errno == EINTR);
    if (j->fd < 0) return fail(j, "open");
  }
  struct iovec *iov = j->iov;
  size_t left = j->niov;
  while (left > 0) {
    ssize_t n = writev(j->fd, iov, left > IOV_MAX ? IOV_MAX : (int)left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(j, "write");
    }
    if (n == 0) {
      /* A regular file never takes nothing of a non-empty write; never loop on it. */
      errno = EIO;
      return fail(j, "write");
    }
    while (left > 0 && (size_t)n >= iov->iov_len) {
      n -= (ssize_t)iov->iov_len;
      iov++;
      left--;
    }
    if (left > 0) {
      iov->iov_base = (char *)iov->iov_base + n;
      iov->iov_len -= (size_t)n;
    }
  }
  if (fsync(j->fd) != 0) return fail(j, "fsync");
  if (fstat(j->fd, &j->st) != 0) return fail(j, "fstat");
  int fd = j->fd;
  j->fd = -1;
  /* Linux releases the descriptor even when close reports an error: never closed twice. */
  if (close(fd) != 0 && errno != EINTR) {
    j->err = errno;
    j->syscall = "close";
  }
}

static napi_value set(napi_env env, napi_value obj, const char *name, napi_value v) {
  napi_set_named_property(env, obj, name, v);
  return obj;
}

static napi_value system_error(napi_env env, job *j) {
  const char *code = uv_err_name(-j->err);
  char message[PATH_MAX + 128];
  if (j->to) snprintf(message, sizeof message, "%s: %s, %s '%s' -> '%s'", code, strerror(j->err), j->syscall, j->path, j->to);
  else if (j->path) snprintf(message, sizeof message, "%s: %s, %s '%s'", code, strerror(j->err), j->syscall, j->path);
  else snprintf(message, sizeof message, "%s: %s, %s", code, strerror(j->err), j->syscall);
  napi_value code_v, message_v, error, v;
  napi_create_string_utf8(env, code, NAPI_AUTO_LENGTH, &code_v);
  napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &message_v);
  napi_create_error(env, code_v, message_v, &error);
  napi_create_int32(env, -j->err, &v);
  set(env, error, "errno", v);
  napi_create_string_utf8(env, j->syscall, NAPI_AUTO_LENGTH, &v);
  set(env, error, "syscall", v);
  if (j->path) {
    napi_create_string_utf8(env, j->path, NAPI_AUTO_LENGTH, &v);
    set(env, error, "path", v);
  }
  if (j->to) {
    napi_create_string_utf8(env, j->to, NAPI_AUTO_LENGTH, &v);
    set(env, error, "dest", v);
  }
  return error;
}

static napi_value stats(napi_env env, const struct stat *st) {
  napi_value obj, v;
  napi_create_object(env, &obj);
  napi_create_bigint_uint64(env, (uint64_t)st->st_ino, &v);
  set(env, obj, "ino", v);
  napi_create_bigint_int64(env, (int64_t)st->st_size, &v);
  set(env, obj, "size", v);
  napi_create_bigint_int64(env, (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec, &v);
  set(env, obj, "mtimeNs", v);
  napi_create_bigint_int64(env, (int64_t)st->st_mtim.tv_sec * 1000 + st->st_mtim.tv_nsec / 1000000, &v);
  set(env, obj, "mtimeMs", v);
  napi_create_uint32(env, (uint32_t)st->st_mode, &v);
  set(env, obj, "mode", v);
  return obj;
}

static void complete(napi_env env, napi_status status, void *data) {
  job *j = data;
  napi_value callback, global, args[2], ignored;
  /* Inside the async work's callback scope: what the callback queues (a promise's reactions) runs after it. */
  if (napi_get_reference_value(env, j->callback, &callback) == napi_ok && napi_get_global(env, &global) == napi_ok) {
    if (status != napi_ok) {
      napi_value m;
      napi_create_string_utf8(env, "durableWrite did not run", NAPI_AUTO_LENGTH, &m);
      napi_create_error(env, NULL, m, &args[0]);
      napi_get_undefined(env, &args[1]);
    } else if (j->err) {
      args[0] = system_error(env, j);
      napi_get_undefined(env, &args[1]);
    } else {
      napi_get_null(env, &args[0]);
      args[1] = stats(env, &j->st);
    }
    free_job(env, j);
    /* An exception the callback throws surfaces as uncaught, as from a node:fs callback. */
    napi_call_function(env, global, callback, 2, args, &ignored);
    return;
  }
  free_job(env, j);
}

static napi_value type_error(napi_env env, const char *message) {
  napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", message);
  return NULL;
}

/* A copy of a JS string that is a path (no NUL byte, shorter than PATH_MAX); NULL after a TypeError. */
static char *path_of(napi_env env, napi_value v) {
  size_t length;
  if (napi_get_value_string_utf8(env, v, NULL, 0, &length) != napi_ok) return NULL;
  if (length >= PATH_MAX) {
    type_error(env, "the path is too long");
    return NULL;
  }
  char *path = malloc(length + 1);
  if (!path) {
    type_error(env, "out of memory");
    return NULL;
  }
  napi_get_value_string_utf8(env, v, path, length + 1, &length);
  if (strlen(path) != length) {
    free(path);
    type_error(env, "the path holds a NUL byte");
    return NULL;
  }
  return path;
}

static void rename_no_replace(job *j) {
  long r;
  do r = syscall(SYS_renameat2, AT_FDCWD, j->path, AT_FDCWD, j->to, RENAME_NOREPLACE);
  while (r != 0 && errno == EINTR);
  if (r != 0) {
    j->err = errno;
    j->syscall = "rename";
  }
}

static napi_value queue(napi_env env, job *j, napi_value callback, napi_async_execute_callback run) {
  napi_value name;
  napi_create_string_utf8(env, "FileCloudFsOp", NAPI_AUTO_LENGTH, &name);
  if (napi_create_reference(env, callback, 1, &j->callback) != napi_ok || napi_create_async_work(env, NULL, name, run, complete, j, &j->work) != napi_ok
      || napi_queue_async_work(env, j->work) != napi_ok) {
    free_job(env, j);
    napi_throw_error(env, NULL, "the file operation could not be queued");
  }
  return NULL;
}

static napi_value durable_write(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  if (argc < 3) return type_error(env, "durableWrite takes a path or a descriptor, an array of chunks and a callback");
  napi_valuetype target_type, callback_type;
  bool is_array;
  napi_typeof(env, argv[0], &target_type);
  napi_typeof(env, argv[2], &callback_type);
  napi_is_array(env, argv[1], &is_array);
  if ((target_type != napi_string && target_type != napi_number) || !is_array || callback_type != napi_function) {
    return type_error(env, "durableWrite takes a path or a descriptor, an array of chunks and a callback");
  }
  uint32_t count;
  napi_get_array_length(env, argv[1], &count);
  job *j = calloc(1, sizeof *j);
  if (!j) return type_error(env, "out of memory");
  j->fd = -1;
  j->iov = calloc(count ? count : 1, sizeof *j->iov);
  if (!j->iov) {
    free_job(env, j);
    return type_error(env, "out of memory");
  }
  for (uint32_t i = 0; i < count; i++) {
    napi_value chunk;
    bool is_typed;
    napi_typedarray_type type;
    size_t length;
    void *bytes;
    napi_get_element(env, argv[1], i, &chunk);
    if (napi_is_typedarray(env, chunk, &is_typed) != napi_ok || !is_typed
        || napi_get_typedarray_info(env, chunk, &type, &length, &bytes, NULL, NULL) != napi_ok || type != napi_uint8_array) {
      free_job(env, j);
      return type_error(env, "every chunk must be a Uint8Array");
    }
    if (length == 0) continue;
    j->iov[j->niov].iov_base = bytes;
    j->iov[j->niov].iov_len = length;
    j->niov++;
  }
  if (target_type == napi_string) {
    if (!(j->path = path_of(env, argv[0]))) {
      free_job(env, j);
      return NULL;
    }
  } else {
    int32_t fd;
    napi_get_value_int32(env, argv[0], &fd);
    if (fd < 0) {
      free_job(env, j);
      return type_error(env, "the descriptor must not be negative");
    }
    j->fd = fd;
  }
  if (napi_create_reference(env, argv[1], 1, &j->chunks) != napi_ok) {
    free_job(env, j);
    napi_throw_error(env, NULL, "the file operation could not be queued");
    return NULL;
  }
  return queue(env, j, argv[2], execute);
}

static napi_value rename_no_replace_sync(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  napi_valuetype types[2] = {napi_undefined, napi_undefined};
  for (size_t i = 0; i < argc && i < 2; i++) napi_typeof(env, argv[i], &types[i]);
  if (argc < 2 || types[0] != napi_string || types[1] != napi_string) return type_error(env, "renameNoReplaceSync takes two paths");
  job j = {.fd = -1};
  if ((j.path = path_of(env, argv[0])) && (j.to = path_of(env, argv[1]))) {
    rename_no_replace(&j);
    if (j.err) napi_throw(env, system_error(env, &j));
  }
  free(j.path);
  free(j.to);
  return NULL;
}

static napi_value open_no_links_sync(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  napi_valuetype type = napi_undefined;
  if (argc >= 1) napi_typeof(env, argv[0], &type);
  if (type != napi_string) return type_error(env, "openNoLinksSync takes a path");
  char *path = path_of(env, argv[0]);
  if (!path) return NULL;
  struct open_how how = {.flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
  long r;
  do r = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
  while (r < 0 && errno == EINTR);
  int result = r < 0 ? -errno : (int)r;
  free(path);
  napi_value v;
  napi_create_int32(env, result, &v);
  return v;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  if (napi_create_function(env, "durableWrite", NAPI_AUTO_LENGTH, durable_write, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "durableWrite", fn) != napi_ok) return NULL;
  if (napi_create_function(env, "renameNoReplaceSync", NAPI_AUTO_LENGTH, rename_no_replace_sync, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "renameNoReplaceSync", fn) != napi_ok) return NULL;
  if (napi_create_function(env, "openNoLinksSync", NAPI_AUTO_LENGTH, open_no_links_sync, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "openNoLinksSync", fn) != napi_ok) return NULL;
  return exports;
}
