import HPSyncModel
import HPSyncStore
import Hummingbird

/// Says on every page when edits made in the browser would be stamped in the future (issue 12
/// §3): the terminal warning of `hp-sync` commands never reaches a browser user, whose edits
/// peers would then refuse without a word. The middleware reads the store's clock state once
/// per page request and hands the text to `Layout.page` through `Layout.clockWarning`.
struct ClockBanner<Context: RequestContext>: RouterMiddleware {
    let worker: StoreWorker

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        // Photos and assets carry no page: no need to read the store for each of them.
        let path = request.uri.path
        guard !path.hasPrefix("/image/"), !path.hasPrefix("/static/") else { return try await next(request, context) }
        let ahead = try? await worker.run { store in try store.clockAhead() }
        let text = ahead.flatMap { $0 }.map(Self.text)
        return try await Layout.$clockWarning.withValue(text) { try await next(request, context) }
    }

    /// The banner's words: the same distinction as the command line's warning.
    static func text(_ ahead: ClockAhead) -> String {
        let now = DateText.iso8601(milliseconds: Int64(ahead.nowMilliseconds))
        let mark = DateText.iso8601(milliseconds: Int64(ahead.highWaterMilliseconds))
        if ahead.clockSeemsBehind {
            return "This machine's clock (\(now)) is probably behind: \(ahead.othersAhead) version(s) made by other "
                + "nodes are stamped after it. Edits made here are stamped after them, not by this clock. Set this "
                + "machine's clock right; do not run `hp-sync clock reset`, which would demote current versions."
        }
        return "This store's clock high-water mark (\(mark)) is ahead of this machine's clock (\(now)): edits made "
            + "here are stamped in the future and peers refuse them until then. If this machine's clock is right, "
            + "run `hp-sync clock reset --yes` on it (see README, Clocks); if it is behind, set it right instead."
    }
}
