// A VFS over SQLite's default one that gathers the writes SQLite makes to a WAL.
//
// SQLite appends every page of a commit to the WAL as two writes, the 24-byte frame header and
// then the page: a pull that changes 1,500 pages makes 3,000 `pwrite` calls, 7.5 ms on the
// machines hp-sync is measured on, against 1.6 ms for the same bytes in 64 KiB writes. This VFS
// keeps a WAL's contiguous writes in a 64 KiB buffer and hands them to the real file in one write.
//
// What it must never change is what another connection (or a crash) sees. Every byte SQLite has
// written reaches the file before:
// - any sync, read, size, truncate, file control or close of that WAL (so a commit is durable
//   exactly when SQLite's sync returns, and SQLite reads back what it wrote);
// - a commit becomes visible: SQLite publishes a commit in the shared WAL index only after
//   writing its last frame, whose header carries the commit mark (a non-zero database size at
//   bytes 4-7). A header with that mark is written out at once, with everything before it, and
//   so is the page that follows it. When SQLite rewrites frame checksums after overwriting
//   frames in place, the last header it rewrites is the commit frame's, written out at once too.
//   The database's shared-memory barrier, which SQLite calls just before publishing, writes out
//   anything left as a second guard (an error there is returned by the WAL's next call).
// Errors of a write that was gathered are returned by the call that writes it out: the commit's
// last write or its sync, so SQLite rolls the transaction back as it would have.
//
// Only WALs whose database reports SQLITE_IOCAP_POWERSAFE_OVERWRITE are gathered (SQLite's
// default on Unix): without it SQLite pads a commit to a sector boundary and syncs in the middle
// of a frame, an order this VFS does not try to follow; such WALs pass through untouched.

#include "CHPSyncWALWriter.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

enum {
    // The Unix VFS keeps only the low 17 bits of a write's size (it never writes more than a
    // page, 64 KiB at most): no write to it may be larger than this. A larger buffer would make
    // no fewer calls, and a WAL buffer is memory the writer holds for as long as it is open.
    pieceSize = 1 << 16,
    bufferCapacity = pieceSize,
    walHeaderSize = 32,
    frameHeaderSize = 24,
};

typedef struct HPFile HPFile;
struct HPFile {
    sqlite3_file base;
    sqlite3_file *real;           // the default VFS's file, stored right after this struct
    HPFile *database;             // for a gathered WAL: the database file of its connection
    HPFile *wal;                  // for a database: its gathered WAL while that is open
    unsigned char *buffer;        // a gathered WAL's pending bytes, allocated at its first write
    int buffered;                 // how many bytes `buffer` holds
    sqlite3_int64 start;          // the file offset of buffer[0]
    sqlite3_int64 commitPage;     // the offset of the page after a commit mark, or -1
    int gathers;                  // 1 for a WAL whose writes are gathered
    int deferredError;            // an error the barrier's write met, for the next call
    hp_wal_writer_counts counts;  // a gathered WAL's writes, asked for and made
};

static sqlite3_vfs *defaultVFS;
static sqlite3_vfs walWriterVFS;

/// Hands `count` bytes to the real file in writes of at most `pieceSize`.
static int writeThrough(HPFile *file, const unsigned char *bytes, int count, sqlite3_int64 offset) {
    for (int done = 0; done < count;) {
        int piece = count - done < pieceSize ? count - done : pieceSize;
        file->counts.issued += 1;
        int rc = file->real->pMethods->xWrite(file->real, bytes + done, piece, offset + done);
        if (rc != SQLITE_OK) return rc;
        done += piece;
    }
    return SQLITE_OK;
}

static int writeOut(HPFile *file) {
    if (file->buffered == 0) return SQLITE_OK;
    int count = file->buffered;
    file->buffered = 0;
    return writeThrough(file, file->buffer, count, file->start);
}

/// Writes out what is pending and returns an error the barrier met, if any.
static int settle(HPFile *file) {
    if (!file->gathers) return SQLITE_OK;
    int deferred = file->deferredError;
    file->deferredError = SQLITE_OK;
    int rc = writeOut(file);
    return deferred != SQLITE_OK ? deferred : rc;
}

static unsigned int bigEndian32(const unsigned char *bytes) {
    return ((unsigned int)bytes[0] << 24) | ((unsigned int)bytes[1] << 16) | ((unsigned int)bytes[2] << 8)
        | (unsigned int)bytes[3];
}

static int gather(HPFile *file, const void *data, int amount, sqlite3_int64 offset) {
    sqlite3_int64 end = file->start + file->buffered;
    if (file->buffered > 0 && offset >= file->start && offset + amount <= end) {
        memcpy(file->buffer + (offset - file->start), data, (size_t)amount);
        return SQLITE_OK;
    }
    if (file->buffered > 0 && offset == end && file->buffered + amount <= bufferCapacity) {
        memcpy(file->buffer + file->buffered, data, (size_t)amount);
        file->buffered += amount;
        return SQLITE_OK;
    }
    int rc = writeOut(file);
    if (rc != SQLITE_OK) return rc;
    if (file->buffer == NULL && amount <= bufferCapacity) file->buffer = malloc(bufferCapacity);
    if (file->buffer == NULL || amount > bufferCapacity) return writeThrough(file, data, amount, offset);
    memcpy(file->buffer, data, (size_t)amount);
    file->start = offset;
    file->buffered = amount;
    return SQLITE_OK;
}

static int hpWrite(sqlite3_file *base, const void *data, int amount, sqlite3_int64 offset) {
    HPFile *file = (HPFile *)base;
    if (!file->gathers) return file->real->pMethods->xWrite(file->real, data, amount, offset);
    file->counts.requested += 1;
    int rc = file->deferredError;
    file->deferredError = SQLITE_OK;
    if (rc != SQLITE_OK) return rc;
    int commitMark = amount == frameHeaderSize && offset >= walHeaderSize
        && bigEndian32((const unsigned char *)data + 4) != 0;
    int commitPage = file->commitPage >= 0 && offset == file->commitPage;
    rc = gather(file, data, amount, offset);
    if (rc != SQLITE_OK) return rc;
    if (commitMark) {
        file->commitPage = offset + frameHeaderSize;
        return writeOut(file);
    }
    if (commitPage) {
        file->commitPage = -1;
        return writeOut(file);
    }
    return SQLITE_OK;
}

static int hpClose(sqlite3_file *base) {
    HPFile *file = (HPFile *)base;
    int rc = settle(file);
    if (file->database != NULL && file->database->wal == file) file->database->wal = NULL;
    if (file->wal != NULL && file->wal->database == file) file->wal->database = NULL;
    free(file->buffer);
    file->buffer = NULL;
    int closed = file->real->pMethods->xClose(file->real);
    return rc != SQLITE_OK ? rc : closed;
}

static int hpRead(sqlite3_file *base, void *data, int amount, sqlite3_int64 offset) {
    HPFile *file = (HPFile *)base;
    int rc = settle(file);
    if (rc != SQLITE_OK) return rc;
    return file->real->pMethods->xRead(file->real, data, amount, offset);
}

static int hpTruncate(sqlite3_file *base, sqlite3_int64 size) {
    HPFile *file = (HPFile *)base;
    int rc = settle(file);
    if (rc != SQLITE_OK) return rc;
    return file->real->pMethods->xTruncate(file->real, size);
}

static int hpSync(sqlite3_file *base, int flags) {
    HPFile *file = (HPFile *)base;
    int rc = settle(file);
    if (rc != SQLITE_OK) return rc;
    return file->real->pMethods->xSync(file->real, flags);
}

static int hpFileSize(sqlite3_file *base, sqlite3_int64 *size) {
    HPFile *file = (HPFile *)base;
    int rc = settle(file);
    if (rc != SQLITE_OK) return rc;
    return file->real->pMethods->xFileSize(file->real, size);
}

static int hpLock(sqlite3_file *base, int level) {
    HPFile *file = (HPFile *)base;
    return file->real->pMethods->xLock(file->real, level);
}

static int hpUnlock(sqlite3_file *base, int level) {
    HPFile *file = (HPFile *)base;
    return file->real->pMethods->xUnlock(file->real, level);
}

static int hpCheckReservedLock(sqlite3_file *base, int *out) {
    HPFile *file = (HPFile *)base;
    return file->real->pMethods->xCheckReservedLock(file->real, out);
}

static int hpFileControl(sqlite3_file *base, int op, void *argument) {
    HPFile *file = (HPFile *)base;
    if (op == HP_WAL_WRITER_COUNTS) {
        if (file->wal == NULL) return SQLITE_NOTFOUND;
        *(hp_wal_writer_counts *)argument = file->wal->counts;
        return SQLITE_OK;
    }
    int rc = settle(file);
    if (rc != SQLITE_OK) return rc;
    return file->real->pMethods->xFileControl(file->real, op, argument);
}

static int hpSectorSize(sqlite3_file *base) {
    HPFile *file = (HPFile *)base;
    return file->real->pMethods->xSectorSize(file->real);
}

static int hpDeviceCharacteristics(sqlite3_file *base) {
    HPFile *file = (HPFile *)base;
    return file->real->pMethods->xDeviceCharacteristics(file->real);
}

static int hpShmMap(sqlite3_file *base, int region, int size, int extend, void volatile **out) {
    HPFile *file = (HPFile *)base;
    return file->real->pMethods->xShmMap(file->real, region, size, extend, out);
}

static int hpShmLock(sqlite3_file *base, int offset, int count, int flags) {
    HPFile *file = (HPFile *)base;
    return file->real->pMethods->xShmLock(file->real, offset, count, flags);
}

static void hpShmBarrier(sqlite3_file *base) {
    HPFile *file = (HPFile *)base;
    HPFile *wal = file->wal;
    if (wal != NULL && wal->buffered > 0) {
        int rc = writeOut(wal);
        if (rc != SQLITE_OK && wal->deferredError == SQLITE_OK) wal->deferredError = rc;
    }
    file->real->pMethods->xShmBarrier(file->real);
}

static int hpShmUnmap(sqlite3_file *base, int deleteFlag) {
    HPFile *file = (HPFile *)base;
    return file->real->pMethods->xShmUnmap(file->real, deleteFlag);
}

static int hpFetch(sqlite3_file *base, sqlite3_int64 offset, int amount, void **out) {
    HPFile *file = (HPFile *)base;
    return file->real->pMethods->xFetch(file->real, offset, amount, out);
}

static int hpUnfetch(sqlite3_file *base, sqlite3_int64 offset, void *pointer) {
    HPFile *file = (HPFile *)base;
    return file->real->pMethods->xUnfetch(file->real, offset, pointer);
}

#define HP_IO_METHODS(version)                                                                     \
    {                                                                                              \
        version, hpClose, hpRead, hpWrite, hpTruncate, hpSync, hpFileSize, hpLock, hpUnlock,       \
            hpCheckReservedLock, hpFileControl, hpSectorSize, hpDeviceCharacteristics, hpShmMap,   \
            hpShmLock, hpShmBarrier, hpShmUnmap, hpFetch, hpUnfetch                                \
    }

// The same functions, offered at the version of the real file's methods (SQLite looks at the
// version to decide whether a file has shared memory and memory mapping).
static const sqlite3_io_methods methodsByVersion[3] = {HP_IO_METHODS(1), HP_IO_METHODS(2), HP_IO_METHODS(3)};

static int isOurs(sqlite3_file *file) {
    return file != NULL && file->pMethods >= &methodsByVersion[0] && file->pMethods <= &methodsByVersion[2];
}

static int hpOpen(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *base, int flags, int *outFlags) {
    (void)vfs;
    HPFile *file = (HPFile *)base;
    memset(file, 0, sizeof(*file));
    file->real = (sqlite3_file *)&file[1];
    file->commitPage = -1;
    int rc = defaultVFS->xOpen(defaultVFS, name, file->real, flags, outFlags);
    const sqlite3_io_methods *real = file->real->pMethods;
    if (real == NULL) {
        file->base.pMethods = NULL;
        return rc;
    }
    int version = real->iVersion < 1 ? 1 : (real->iVersion > 3 ? 3 : real->iVersion);
    file->base.pMethods = &methodsByVersion[version - 1];
    if (rc != SQLITE_OK || !(flags & SQLITE_OPEN_WAL) || name == NULL) return rc;
    sqlite3_file *database = sqlite3_database_file_object(name);
    if (!isOurs(database)) return rc;
    HPFile *owner = (HPFile *)database;
    if (!(hpDeviceCharacteristics(database) & SQLITE_IOCAP_POWERSAFE_OVERWRITE)) return rc;
    file->gathers = 1;
    file->database = owner;
    owner->wal = file;
    return rc;
}

static int hpDelete(sqlite3_vfs *vfs, const char *name, int syncDirectory) {
    (void)vfs;
    return defaultVFS->xDelete(defaultVFS, name, syncDirectory);
}

static int hpAccess(sqlite3_vfs *vfs, const char *name, int flags, int *out) {
    (void)vfs;
    return defaultVFS->xAccess(defaultVFS, name, flags, out);
}

static int hpFullPathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    (void)vfs;
    return defaultVFS->xFullPathname(defaultVFS, name, size, out);
}

static void *hpDlOpen(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return defaultVFS->xDlOpen(defaultVFS, name);
}

static void hpDlError(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    defaultVFS->xDlError(defaultVFS, size, out);
}

static void (*hpDlSym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    (void)vfs;
    return defaultVFS->xDlSym(defaultVFS, handle, symbol);
}

static void hpDlClose(sqlite3_vfs *vfs, void *handle) {
    (void)vfs;
    defaultVFS->xDlClose(defaultVFS, handle);
}

static int hpRandomness(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return defaultVFS->xRandomness(defaultVFS, size, out);
}

static int hpSleep(sqlite3_vfs *vfs, int microseconds) {
    (void)vfs;
    return defaultVFS->xSleep(defaultVFS, microseconds);
}

static int hpCurrentTime(sqlite3_vfs *vfs, double *out) {
    (void)vfs;
    return defaultVFS->xCurrentTime(defaultVFS, out);
}

static int hpGetLastError(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return defaultVFS->xGetLastError ? defaultVFS->xGetLastError(defaultVFS, size, out) : 0;
}

static int hpCurrentTimeInt64(sqlite3_vfs *vfs, sqlite3_int64 *out) {
    (void)vfs;
    return defaultVFS->xCurrentTimeInt64(defaultVFS, out);
}

static int hpSetSystemCall(sqlite3_vfs *vfs, const char *name, sqlite3_syscall_ptr call) {
    (void)vfs;
    return defaultVFS->xSetSystemCall(defaultVFS, name, call);
}

static sqlite3_syscall_ptr hpGetSystemCall(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return defaultVFS->xGetSystemCall(defaultVFS, name);
}

static const char *hpNextSystemCall(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return defaultVFS->xNextSystemCall(defaultVFS, name);
}

static int registerOnce(void) {
    sqlite3_vfs *found = sqlite3_vfs_find(NULL);
    if (found == NULL) return SQLITE_ERROR;
    if (found == &walWriterVFS) return SQLITE_OK;
    defaultVFS = found;
    walWriterVFS = (sqlite3_vfs){
        .iVersion = found->iVersion < 3 ? found->iVersion : 3,
        .szOsFile = (int)sizeof(HPFile) + found->szOsFile,
        .mxPathname = found->mxPathname,
        .zName = "hp-sync-wal",
        .xOpen = hpOpen,
        .xDelete = hpDelete,
        .xAccess = hpAccess,
        .xFullPathname = hpFullPathname,
        .xDlOpen = hpDlOpen,
        .xDlError = hpDlError,
        .xDlSym = hpDlSym,
        .xDlClose = hpDlClose,
        .xRandomness = hpRandomness,
        .xSleep = hpSleep,
        .xCurrentTime = hpCurrentTime,
        .xGetLastError = hpGetLastError,
        .xCurrentTimeInt64 = found->iVersion >= 2 ? hpCurrentTimeInt64 : NULL,
        .xSetSystemCall = found->iVersion >= 3 ? hpSetSystemCall : NULL,
        .xGetSystemCall = found->iVersion >= 3 ? hpGetSystemCall : NULL,
        .xNextSystemCall = found->iVersion >= 3 ? hpNextSystemCall : NULL,
    };
    return sqlite3_vfs_register(&walWriterVFS, 1);
}

static pthread_once_t registration = PTHREAD_ONCE_INIT;
static int registrationResult = SQLITE_ERROR;

static void registerWithResult(void) { registrationResult = registerOnce(); }

int hp_wal_writer_register(void) {
    pthread_once(&registration, registerWithResult);
    return registrationResult;
}

int hp_wal_writer_counts_of(sqlite3 *connection, hp_wal_writer_counts *counts) {
    return sqlite3_file_control(connection, "main", HP_WAL_WRITER_COUNTS, counts);
}
