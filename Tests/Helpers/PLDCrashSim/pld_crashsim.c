/* Fault-injecting wrapper around SQLite's "unix" VFS: simulated power loss and I/O errors.
   See include/pld_crashsim.h. Adapted from the reliability probes (crashsim.c). */
#include "pld_crashsim.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct Pending {
  sqlite3_int64 offset;
  int length;
  int oldLength; /* bytes that existed before the write (the rest was past the end of the file) */
  unsigned char *old;
  struct Pending *next; /* newest first */
} Pending;

typedef struct CrashFile {
  sqlite3_file base;
  sqlite3_file *real;
  Pending *pending;
  struct CrashFile *nextOpen;
  int tracked; /* name matches the I/O-error prefix at open time */
  char name[512];
} CrashFile;

static pthread_mutex_t gLock = PTHREAD_MUTEX_INITIALIZER;
static sqlite3_vfs *gReal;
static sqlite3_vfs gVfs;
static int gRegistered;
static CrashFile *gOpen;
/* power loss */
static long gCrashAt, gOps;
static unsigned int gSeed;
/* I/O errors */
static long gIoerrAt, gIoOps, gIoerrHits;
static int gIoerrPersistent, gIoerrFirstKind;
static char gPrefix[512];

static int crashArmed(void) { return __atomic_load_n(&gCrashAt, __ATOMIC_RELAXED) > 0; }

static void freePending(CrashFile *f) {
  Pending *p = f->pending;
  while (p) {
    Pending *next = p->next;
    free(p->old);
    free(p);
    p = next;
  }
  f->pending = 0;
}

/* Reverts a random subset of the unsynced writes of every open file, then exits. Writes are undone
   newest first, so where writes overlap the oldest pre-image wins. */
static void powerLoss(void) {
  for (CrashFile *f = gOpen; f; f = f->nextOpen) {
    for (Pending *p = f->pending; p; p = p->next) {
      int mode = rand_r(&gSeed) % 3; /* 0 keep, 1 drop, 2 torn */
      if (mode == 0) continue;
      unsigned char *buffer = malloc(p->length);
      if (!buffer) continue;
      f->real->pMethods->xRead(f->real, buffer, p->length, p->offset);
      for (int sector = 0; sector < p->length; sector += 512) {
        int length = p->length - sector < 512 ? p->length - sector : 512;
        if (mode == 1 || (rand_r(&gSeed) & 1)) {
          for (int i = 0; i < length; i++) {
            int k = sector + i;
            buffer[k] = k < p->oldLength ? p->old[k] : 0;
          }
        }
      }
      f->real->pMethods->xWrite(f->real, buffer, p->length, p->offset);
      free(buffer);
    }
  }
  /* When the power was lost (CLOCK_MONOTONIC), for tests that compare it with acknowledgement times: one
     write(2) of a short line to a pipe is atomic, so it never splits a line another thread writes. */
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  char line[64];
  int length = snprintf(line, sizeof line, "crash %lld\n", (long long)now.tv_sec * 1000000000LL + now.tv_nsec);
  if (length > 0) (void)!write(1, line, (size_t)length);
  _exit(99);
}

static void tick(void) {
  if (!crashArmed()) return;
  if (++gOps >= gCrashAt) powerLoss();
}

enum { KIND_READ = 1, KIND_WRITE = 2, KIND_SYNC = 3, KIND_TRUNCATE = 4 };

/* Whether this operation on `f` must fail. */
static int ioFail(CrashFile *f, int kind) {
  if (!__atomic_load_n(&f->tracked, __ATOMIC_RELAXED)) return 0;
  int fail = 0;
  pthread_mutex_lock(&gLock);
  if (gIoerrAt > 0) {
    gIoOps++;
    if (gIoOps == gIoerrAt || (gIoerrPersistent && gIoOps > gIoerrAt)) {
      if (gIoerrHits++ == 0) gIoerrFirstKind = kind;
      fail = 1;
    }
  }
  pthread_mutex_unlock(&gLock);
  return fail;
}

static int matchesPrefix(const char *name) {
  if (!name) return 0;
  size_t n = strlen(gPrefix);
  return n == 0 || strncmp(name, gPrefix, n) == 0;
}

void pld_crashsim_set_ioerr(long at, int persistent, const char *path_prefix) {
  pthread_mutex_lock(&gLock);
  gIoerrAt = at;
  gIoerrPersistent = persistent;
  gIoOps = 0;
  gIoerrHits = 0;
  gIoerrFirstKind = 0;
  if (path_prefix) {
    strncpy(gPrefix, path_prefix, sizeof gPrefix - 1);
    gPrefix[sizeof gPrefix - 1] = 0;
  } else {
    gPrefix[0] = 0;
  }
  for (CrashFile *f = gOpen; f; f = f->nextOpen) {
    __atomic_store_n(&f->tracked, matchesPrefix(f->name), __ATOMIC_RELAXED);
  }
  pthread_mutex_unlock(&gLock);
}

long pld_crashsim_ioerr_hits(void) {
  pthread_mutex_lock(&gLock);
  long hits = gIoerrHits;
  pthread_mutex_unlock(&gLock);
  return hits;
}

long pld_crashsim_ioerr_ops(void) {
  pthread_mutex_lock(&gLock);
  long ops = gIoOps;
  pthread_mutex_unlock(&gLock);
  return ops;
}

int pld_crashsim_ioerr_first_kind(void) {
  pthread_mutex_lock(&gLock);
  int kind = gIoerrFirstKind;
  pthread_mutex_unlock(&gLock);
  return kind;
}

/* ---- sqlite3_io_methods ---- */

static int csClose(sqlite3_file *pf) {
  CrashFile *f = (CrashFile *)pf;
  pthread_mutex_lock(&gLock);
  for (CrashFile **pp = &gOpen; *pp; pp = &(*pp)->nextOpen) {
    if (*pp == f) {
      *pp = f->nextOpen;
      break;
    }
  }
  pthread_mutex_unlock(&gLock);
  freePending(f);
  int rc = f->real->pMethods ? f->real->pMethods->xClose(f->real) : SQLITE_OK;
  sqlite3_free(f->real);
  return rc;
}

static int csRead(sqlite3_file *pf, void *buffer, int amount, sqlite3_int64 offset) {
  CrashFile *f = (CrashFile *)pf;
  if (ioFail(f, KIND_READ)) return SQLITE_IOERR_READ;
  return f->real->pMethods->xRead(f->real, buffer, amount, offset);
}

static int csWrite(sqlite3_file *pf, const void *buffer, int amount, sqlite3_int64 offset) {
  CrashFile *f = (CrashFile *)pf;
  tick();
  if (ioFail(f, KIND_WRITE)) return SQLITE_IOERR_WRITE;
  if (crashArmed()) {
    Pending *p = calloc(1, sizeof *p);
    if (p) {
      p->offset = offset;
      p->length = amount;
      p->old = malloc(amount);
      sqlite3_int64 size = 0;
      f->real->pMethods->xFileSize(f->real, &size);
      p->oldLength = size <= offset ? 0 : (size - offset >= amount ? amount : (int)(size - offset));
      if (p->old && p->oldLength > 0) f->real->pMethods->xRead(f->real, p->old, p->oldLength, offset);
      p->next = f->pending;
      f->pending = p;
    }
  }
  return f->real->pMethods->xWrite(f->real, buffer, amount, offset);
}

static int csTruncate(sqlite3_file *pf, sqlite3_int64 size) {
  CrashFile *f = (CrashFile *)pf;
  tick();
  if (ioFail(f, KIND_TRUNCATE)) return SQLITE_IOERR_TRUNCATE;
  /* Forget unsynced writes wholly past the new end: reverting them would re-extend the file. */
  for (Pending **pp = &f->pending; *pp;) {
    if ((*pp)->offset >= size) {
      Pending *gone = *pp;
      *pp = gone->next;
      free(gone->old);
      free(gone);
    } else {
      pp = &(*pp)->next;
    }
  }
  return f->real->pMethods->xTruncate(f->real, size);
}

static int csSync(sqlite3_file *pf, int flags) {
  CrashFile *f = (CrashFile *)pf;
  tick();
  if (ioFail(f, KIND_SYNC)) return SQLITE_IOERR_FSYNC;
  int rc = f->real->pMethods->xSync(f->real, flags);
  if (rc == SQLITE_OK) freePending(f);
  return rc;
}

static int csFileSize(sqlite3_file *pf, sqlite3_int64 *size) {
  CrashFile *f = (CrashFile *)pf;
  return f->real->pMethods->xFileSize(f->real, size);
}
static int csLock(sqlite3_file *pf, int level) {
  CrashFile *f = (CrashFile *)pf;
  return f->real->pMethods->xLock(f->real, level);
}
static int csUnlock(sqlite3_file *pf, int level) {
  CrashFile *f = (CrashFile *)pf;
  return f->real->pMethods->xUnlock(f->real, level);
}
static int csCheckReservedLock(sqlite3_file *pf, int *result) {
  CrashFile *f = (CrashFile *)pf;
  return f->real->pMethods->xCheckReservedLock(f->real, result);
}
static int csFileControl(sqlite3_file *pf, int op, void *argument) {
  CrashFile *f = (CrashFile *)pf;
  return f->real->pMethods->xFileControl(f->real, op, argument);
}
static int csSectorSize(sqlite3_file *pf) {
  CrashFile *f = (CrashFile *)pf;
  return f->real->pMethods->xSectorSize(f->real);
}
static int csDeviceCharacteristics(sqlite3_file *pf) {
  CrashFile *f = (CrashFile *)pf;
  return f->real->pMethods->xDeviceCharacteristics(f->real);
}
static int csShmMap(sqlite3_file *pf, int region, int size, int extend, void volatile **pp) {
  CrashFile *f = (CrashFile *)pf;
  return f->real->pMethods->xShmMap(f->real, region, size, extend, pp);
}
static int csShmLock(sqlite3_file *pf, int offset, int n, int flags) {
  CrashFile *f = (CrashFile *)pf;
  return f->real->pMethods->xShmLock(f->real, offset, n, flags);
}
static void csShmBarrier(sqlite3_file *pf) {
  CrashFile *f = (CrashFile *)pf;
  f->real->pMethods->xShmBarrier(f->real);
}
static int csShmUnmap(sqlite3_file *pf, int deleteFlag) {
  CrashFile *f = (CrashFile *)pf;
  return f->real->pMethods->xShmUnmap(f->real, deleteFlag);
}
/* No memory-mapped reads: every write must go through xWrite to be tracked. */
static int csFetch(sqlite3_file *pf, sqlite3_int64 offset, int amount, void **pp) {
  (void)pf;
  (void)offset;
  (void)amount;
  *pp = 0;
  return SQLITE_OK;
}
static int csUnfetch(sqlite3_file *pf, sqlite3_int64 offset, void *p) {
  (void)pf;
  (void)offset;
  (void)p;
  return SQLITE_OK;
}

static const sqlite3_io_methods gMethods = {
    3, csClose, csRead, csWrite, csTruncate, csSync, csFileSize, csLock, csUnlock, csCheckReservedLock,
    csFileControl, csSectorSize, csDeviceCharacteristics, csShmMap, csShmLock, csShmBarrier, csShmUnmap,
    csFetch, csUnfetch};

/* ---- sqlite3_vfs ---- */

static int csOpen(sqlite3_vfs *vfs, const char *name, sqlite3_file *pf, int flags, int *outFlags) {
  (void)vfs;
  CrashFile *f = (CrashFile *)pf;
  memset(f, 0, sizeof *f);
  f->real = sqlite3_malloc(gReal->szOsFile);
  if (!f->real) return SQLITE_NOMEM;
  memset(f->real, 0, gReal->szOsFile);
  int rc = gReal->xOpen(gReal, name, f->real, flags, outFlags);
  if (rc != SQLITE_OK) {
    if (f->real->pMethods) f->real->pMethods->xClose(f->real);
    sqlite3_free(f->real);
    f->real = 0;
    return rc;
  }
  if (name) strncpy(f->name, name, sizeof f->name - 1);
  f->base.pMethods = &gMethods;
  pthread_mutex_lock(&gLock);
  __atomic_store_n(&f->tracked, matchesPrefix(name), __ATOMIC_RELAXED);
  f->nextOpen = gOpen;
  gOpen = f;
  pthread_mutex_unlock(&gLock);
  return SQLITE_OK;
}
static int csDelete(sqlite3_vfs *vfs, const char *name, int syncDir) {
  (void)vfs;
  tick();
  return gReal->xDelete(gReal, name, syncDir);
}
static int csAccess(sqlite3_vfs *vfs, const char *name, int flags, int *result) {
  (void)vfs;
  return gReal->xAccess(gReal, name, flags, result);
}
static int csFullPathname(sqlite3_vfs *vfs, const char *name, int n, char *out) {
  (void)vfs;
  return gReal->xFullPathname(gReal, name, n, out);
}
static void *csDlOpen(sqlite3_vfs *vfs, const char *name) {
  (void)vfs;
  return gReal->xDlOpen(gReal, name);
}
static void csDlError(sqlite3_vfs *vfs, int n, char *message) {
  (void)vfs;
  gReal->xDlError(gReal, n, message);
}
static void (*csDlSym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
  (void)vfs;
  return gReal->xDlSym(gReal, handle, symbol);
}
static void csDlClose(sqlite3_vfs *vfs, void *handle) {
  (void)vfs;
  gReal->xDlClose(gReal, handle);
}
static int csRandomness(sqlite3_vfs *vfs, int n, char *out) {
  (void)vfs;
  return gReal->xRandomness(gReal, n, out);
}
static int csSleep(sqlite3_vfs *vfs, int microseconds) {
  (void)vfs;
  return gReal->xSleep(gReal, microseconds);
}
static int csCurrentTime(sqlite3_vfs *vfs, double *time) {
  (void)vfs;
  return gReal->xCurrentTime(gReal, time);
}
static int csGetLastError(sqlite3_vfs *vfs, int n, char *message) {
  (void)vfs;
  return gReal->xGetLastError(gReal, n, message);
}
static int csCurrentTimeInt64(sqlite3_vfs *vfs, sqlite3_int64 *time) {
  (void)vfs;
  return gReal->xCurrentTimeInt64(gReal, time);
}

int pld_crashsim_register(long crash_after_ops, unsigned int seed) {
  pthread_mutex_lock(&gLock);
  int rc = SQLITE_OK;
  if (!gRegistered) {
    gReal = sqlite3_vfs_find("unix");
    if (!gReal) {
      pthread_mutex_unlock(&gLock);
      return SQLITE_ERROR;
    }
    memset(&gVfs, 0, sizeof gVfs);
    gVfs.iVersion = 2;
    gVfs.szOsFile = sizeof(CrashFile);
    gVfs.mxPathname = gReal->mxPathname;
    gVfs.zName = "pld_crashsim";
    gVfs.xOpen = csOpen;
    gVfs.xDelete = csDelete;
    gVfs.xAccess = csAccess;
    gVfs.xFullPathname = csFullPathname;
    gVfs.xDlOpen = csDlOpen;
    gVfs.xDlError = csDlError;
    gVfs.xDlSym = csDlSym;
    gVfs.xDlClose = csDlClose;
    gVfs.xRandomness = csRandomness;
    gVfs.xSleep = csSleep;
    gVfs.xCurrentTime = csCurrentTime;
    gVfs.xGetLastError = csGetLastError;
    gVfs.xCurrentTimeInt64 = csCurrentTimeInt64;
    rc = sqlite3_vfs_register(&gVfs, 1);
    gRegistered = rc == SQLITE_OK;
  }
  gSeed = seed;
  gOps = 0;
  __atomic_store_n(&gCrashAt, crash_after_ops, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&gLock);
  return rc;
}
