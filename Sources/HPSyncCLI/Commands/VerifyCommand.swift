import ArgumentParser
import Foundation
import HPSyncCrypto
import HPSyncEngine
import HPSyncStore
import Logging

/// `hp-sync verify [--repair [--from PEER...]]`: exits 0 only when clean.
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify", abstract: "Check the database and every image; exit 0 only when clean.",
        discussion: """
            With --repair --from PEER, every image the store names but does not hold intact (missing, \
            wrong size, wrong SHA-256) is fetched again by digest from PEER (tried in the order given), \
            verified and put in place; no item's version changes. Needs peers speaking protocol version 3.
            """)

    @OptionGroup var options: StoreOptions
    @Flag(help: "Finish interrupted image writes and remove orphan files.") var repair = false
    @Option(
        name: .customLong("from"),
        help: "With --repair: fetch missing or damaged images again from this peer (name or HOST[:PORT]; repeatable).")
    var peers: [String] = []

    @Flag(help: "Print JSON (counts, problems, repairs) instead of lines.") var json = false
    @Flag(name: [.customShort("q"), .long], help: "Print nothing when the store is clean (for cron).") var quiet = false

    /// `--json`: the report; `problems` are the lines the text shows.
    struct Document: Encodable {
        var itemsChecked: Int
        var imagesChecked: Int
        var clean: Bool
        var problems: [String]
        var repaired: [String]
        /// Not problems (the exit code stays 0): a store that group or others can read.
        var warnings: [String]
        /// Not problems either: leftover files no item names, which the daily sweep removes.
        var notes: [String]
        var inFlight: [String]
    }

    func validate() throws {
        if !peers.isEmpty && !repair { throw ValidationError("--from needs --repair") }
    }

    func run() throws {
        let logger = options.makeLogger()
        let (lock, store) =
            try repair
            ? options.lockAndOpenStore(logger: logger, blindAllowed: true)
            : (nil, options.openStore(logger: logger, blindAllowed: true))
        let report = try withExtendedLifetime(lock) { () throws -> VerifyReport in
            let report = try store.verify(repair: repair)
            guard !peers.isEmpty, report.hasImagesToHeal else { return report }
            let healed = try heal(store, logger: logger)
            // Look again: what is clean now is what the peers healed.
            var after = try store.verify(repair: false)
            after.repaired = report.repaired + healed
            return after
        }
        if json {
            try Output.json(
                Document(
                    itemsChecked: report.itemsChecked, imagesChecked: report.imagesChecked, clean: report.isClean,
                    problems: report.problems, repaired: report.repaired, warnings: report.warnings,
                    notes: report.notes, inFlight: report.inFlight))
            if !report.isClean { throw VerifyFoundProblems(count: report.problems.count) }
            return
        }
        var lines = report.repaired.map { "repaired: \($0)" }
        lines += report.problems.map { "problem: \($0)" }
        lines += report.warnings.map { "warning: \($0)" }
        lines += report.notes.map { "note: \($0)" }
        lines += report.inFlight.map { "in flight (left alone): images/\($0)" }
        let checked =
            store.isBlind
            ? "checked \(report.blindEntriesChecked) sealed entries, \(report.blindPacksChecked) packs, "
                + "\(report.blindPhotosChecked) photos (blind store: names and sizes, no contents): "
            : "checked \(report.itemsChecked) items, \(report.imagesChecked) images: "
        lines.append(
            checked
                + (report.isClean
                    ? "clean" : "\(report.problems.count) problem\(report.problems.count == 1 ? "" : "s")"))
        if !(quiet && report.isClean && report.repaired.isEmpty && report.warnings.isEmpty) {
            Output.write(lines.joined(separator: "\n") + "\n")
        }
        if !report.isClean { throw VerifyFoundProblems(count: report.problems.count) }
    }

    /// Asks each peer in turn for the images still wanted; returns one line per image healed.
    private func heal(_ store: Store, logger: Logger) throws -> [String] {
        let identity = try options.loadIdentity()
        let connector = Connector(store: store, identity: identity, logger: logger)
        let client = SyncClient(store: store, logger: logger)
        var lines: [String] = []
        for peer in peers {
            // The trash's images too: one request per digest heals both sides at once.
            let wanted = try store.imagesToHeal() + store.trashImagesToHeal()
            guard !wanted.isEmpty else { break }
            do {
                let target = try connector.resolve(peer)
                let report = try client.repairImages(
                    wanted, over: FramedChannel(stream: connector.connect(target)), serverNodeID: target.nodeID,
                    peerName: target.name)
                lines += report.healed.kept.map { "fetched the image of \($0) again from \(target.name)" }
                if report.healed.omitted > 0 { lines.append("and \(report.healed.omitted) more from \(target.name)") }
            } catch {
                // The next peer may have them; what none supplies stays listed as a problem.
                Output.note("hp-sync: warning: could not repair from \(peer): \(error)")
            }
        }
        return lines
    }
}
