import Foundation
import HPSyncStore
import Hummingbird
import Logging
import NIOCore

/// `hp-sync web`: serves `WebApp` on a loopback address until SIGINT or SIGTERM.
public struct WebServer: Sendable {
    public let store: Store
    public let listen: ListenAddress
    public let secrets: AccessSecrets
    let logger: Logger

    public init(store: Store, listen: ListenAddress, secrets: AccessSecrets = AccessSecrets(), logger: Logger) {
        self.store = store
        self.listen = listen
        self.secrets = secrets
        self.logger = logger
    }

    /// Serves until the process is told to stop; `onListening` gets the URL with the token once
    /// the socket is bound (the port is known then, even for port 0).
    public func run(onListening: @escaping @Sendable (String) -> Void) async throws {
        let worker = StoreWorker(store: store)
        let app = try WebApp(worker: worker, secrets: secrets)
        let host = listen.urlHost
        let token = secrets.token
        let listening = ListeningFlag()
        let application = Application(
            router: app.makeRouter(),
            configuration: .init(address: .hostname(listen.host, port: listen.port), serverName: "hp-sync"),
            onServerRunning: { channel in
                listening.set()
                let port = channel.localAddress?.port ?? 0
                onListening("http://\(host):\(port)/?token=\(token)")
            },
            logger: logger)
        do {
            try await application.runService()
        } catch {
            app.cleanUp()
            try? await worker.shutdown()
            // Failing before it listens is failing to listen: the port in use, as `serve` says it.
            if !listening.isSet { throw Self.cannotListen(on: listen, error) }
            throw error
        }
        app.cleanUp()
        try await worker.shutdown()
    }

    /// `run`, for a synchronous caller (the CLI's commands are synchronous): blocks this thread,
    /// which must not be one of Swift's cooperative threads (the main thread is fine).
    public func runBlocking(onListening: @escaping @Sendable (String) -> Void) throws {
        let done = DispatchSemaphore(value: 0)
        let outcome = LockedResult()
        Task.detached {
            do {
                try await run(onListening: onListening)
                outcome.set(nil)
            } catch {
                outcome.set(error)
            }
            done.signal()
        }
        done.wait()
        if let error = outcome.get() { throw error }
    }
}

extension WebServer {
    /// What `hp-sync web` says when it cannot listen: the address, the reason in plain words
    /// (not NIO's system call), and what to do.
    static func cannotListen(on address: ListenAddress, _ error: any Error) -> WebError {
        let reason =
            (error as? IOError).map { String(cString: strerror($0.errnoCode)).lowercased() } ?? "\(error)"
        return .cannotListen(
            "cannot listen on \(address): \(reason); if another program (another `hp-sync web`?) uses that port, "
                + "stop it or choose another address with --listen 127.0.0.1:PORT (port 0 picks a free one)")
    }
}

/// Whether the web server got as far as listening.
private final class ListeningFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false

    func set() {
        lock.lock()
        value = true
        lock.unlock()
    }

    var isSet: Bool {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
}

/// The error a detached task hands back to the thread waiting for it.
private final class LockedResult: @unchecked Sendable {
    private let lock = NSLock()
    private var error: (any Error)?

    func set(_ error: (any Error)?) {
        lock.lock()
        self.error = error
        lock.unlock()
    }

    func get() -> (any Error)? {
        lock.lock()
        defer { lock.unlock() }
        return error
    }
}
