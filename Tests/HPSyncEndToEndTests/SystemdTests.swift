import Foundation
import HPSyncTesting
import Testing

@Suite("serve under systemd: Type=notify and journal priorities, run as a binary")
struct SystemdTests {
    /// Python plays systemd: a notify socket, a stderr pipe named in JOURNAL_STREAM, SIGTERM.
    static let systemd = """
        import os, signal, socket, subprocess, sys
        binary, store, path = sys.argv[1:4]
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        notify.bind(path)
        notify.settimeout(30)
        read_end, write_end = os.pipe()
        info = os.fstat(write_end)
        env = dict(os.environ, NOTIFY_SOCKET=path, JOURNAL_STREAM=f"{info.st_dev}:{info.st_ino}")
        server = subprocess.Popen(
            [binary, "serve", "--store", store, "--listen", "127.0.0.1:0"], stderr=write_end, env=env)
        os.close(write_end)
        try:
            ready = notify.recv(4096).decode()
            server.send_signal(signal.SIGTERM)
            stopping = notify.recv(4096).decode()
            status = server.wait(30)
        finally:
            server.kill()  # never leave a server holding the pipes (a no-op once it exited)
        logs = b""
        while chunk := os.read(read_end, 65536):
            logs += chunk
        print(ready.replace("\\n", " | "))
        print(stopping)
        print(f"exit {status}")
        sys.stdout.write(logs.decode())
        """

    @Test func serveSaysReadyAndLogsWithPriorities() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-c", Self.systemd, runner.binary.path, runner.store.path,
            runner.root.appendingPathComponent("notify.sock").path,
        ]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let lines = text.split(separator: "\n").map(String.init)
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(lines.first?.hasPrefix("READY=1 | STATUS=serving 127.0.0.1:") == true, "\(text)")
        #expect(lines.dropFirst().first == "STOPPING=1")
        #expect(lines.contains("exit 0"))
        #expect(lines.contains { $0.hasPrefix("<6>hp-sync: ") && $0.hasSuffix("serving") }, "\(text)")
        #expect(lines.contains { $0.hasPrefix("<5>hp-sync: ") && $0.contains("stopping") }, "\(text)")
    }

    @Test func withoutTheJournalLogsKeepTheirFormat() throws {
        let runner = try BinaryRunner.initialized()
        defer { runner.cleanUp() }
        // JOURNAL_STREAM naming another stream (stderr was redirected): the ordinary format.
        let process = Process()
        process.executableURL = runner.binary
        process.arguments = ["verify", "-v", "--store", runner.store.path]
        process.environment = ["JOURNAL_STREAM": "1:1"]
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(text.contains(" info hp-sync: ") && !text.hasPrefix("<"), "\(text)")
    }
}
