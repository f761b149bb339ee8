import ArgumentParser
import HPSyncWeb

/// `hp-sync web`: the inventory in a browser, on this node's store, beside `serve` and cron pulls.
struct WebCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "web", abstract: "Browse and edit the inventory in a web browser (loopback only).",
        discussion: """
            Prints a URL with a random access token (as Jupyter does); open it in a browser on this \
            machine. Nothing is served without the token. Only loopback addresses are served: the web \
            app has no TLS, so from another machine use an SSH tunnel \
            (ssh -L 8080:127.0.0.1:8080 HOST). Edits made in the browser sync like any other. \
            Stop with Ctrl-C.
            """)

    @OptionGroup var options: StoreOptions

    @Option(help: "Where to listen: a loopback HOST:PORT (127.0.0.1, [::1] or localhost; port 0 picks one).")
    var listen: String = ListenAddress.default.description

    func validate() throws {
        do {
            _ = try ListenAddress(parsing: listen)
        } catch {
            throw ValidationError(error.description)
        }
    }

    func run() throws {
        let address = try ListenAddress(parsing: listen)
        let logger = options.makeLogger(default: .notice)
        let store = try options.openStore(logger: logger)
        try WebServer(store: store, listen: address, logger: logger).runBlocking { url in
            Output.write(
                "hp-sync web: serving \(store.directory.path)\nOpen in a browser on this machine:\n    \(url)\n")
        }
    }
}
