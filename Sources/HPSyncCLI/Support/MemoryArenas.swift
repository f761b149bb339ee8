#if canImport(Glibc)
    import Glibc
#endif

/// Caps glibc's malloc arenas for the whole process.
///
/// glibc gives each thread that allocates an arena of its own (up to eight per core) and keeps
/// the memory freed into it. hp-sync's work hops between threads: GRDB runs each write on
/// whichever Dispatch worker is free, and the image fsyncs run on lanes of their own, so the
/// batches a pull commits end up spread over many arenas, each keeping its share. Measured on an
/// M pull (100,000 items, 2,000 images): 82–106 MB peak RSS uncapped, 73–75 MB with one arena, no
/// CPU difference seen. Two arenas keep contention low for the two threads that allocate most (the
/// receiver and the committer). `MALLOC_ARENA_MAX` in the environment still wins: glibc reads it
/// first and this leaves it alone.
///
/// `mallopt` is declared in `<malloc.h>`, which Swift's Glibc module does not import, so it is
/// looked up by name.
enum MemoryArenas {
    static let limit: Int32 = 2
    /// `M_ARENA_MAX` in glibc's `<malloc.h>`.
    private static let arenaMaxParameter: Int32 = -8

    static func cap() {
        #if canImport(Glibc)
            guard getenv("MALLOC_ARENA_MAX") == nil, let symbol = dlsym(nil, "mallopt") else { return }
            typealias MallOpt = @convention(c) (Int32, Int32) -> Int32
            _ = unsafeBitCast(symbol, to: MallOpt.self)(arenaMaxParameter, limit)
        #endif
    }
}
