#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One resolved IPv4 or IPv6 socket address, copied out of getaddrinfo's list.
struct SocketAddress: CustomStringConvertible {
    var storage = sockaddr_storage()
    var length: socklen_t = 0

    var family: Int32 { Int32(storage.ss_family) }

    /// Copies `length` bytes of a `sockaddr`.
    init(_ address: UnsafePointer<sockaddr>, length: socklen_t) {
        // Never more than the storage holds, whatever length a caller passes.
        self.length = min(length, socklen_t(MemoryLayout<sockaddr_storage>.size))
        withUnsafeMutableBytes(of: &storage) { target in
            target.copyMemory(from: UnsafeRawBufferPointer(start: address, count: Int(self.length)))
        }
    }

    /// Calls `body` with the address as a `sockaddr` pointer.
    func withSockAddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws -> Result) rethrows -> Result {
        try withUnsafeBytes(of: storage) { raw in
            try body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), length)
        }
    }

    /// The numeric host, without brackets.
    var host: String {
        var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        let result = withSockAddr { address, length in
            getnameinfo(address, length, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST)
        }
        guard result == 0 else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    var port: UInt16 {
        withUnsafeBytes(of: storage) { raw in
            if family == AF_INET6 {
                return UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port)
            }
            return UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port)
        }
    }

    /// "127.0.0.1:443" or "[::1]:443".
    var description: String {
        family == AF_INET6 ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// The peer of a connected socket, or nil.
    static func peer(of fd: Int32) -> SocketAddress? {
        query(fd, getpeername)
    }

    /// The local address of a bound socket, or nil.
    static func local(of fd: Int32) -> SocketAddress? {
        query(fd, getsockname)
    }

    private static func query(
        _ fd: Int32, _ call: (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32
    ) -> SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutableBytes(of: &storage) { raw in
            call(fd, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), &length)
        }
        guard result == 0 else { return nil }
        return withUnsafeBytes(of: storage) { raw in
            SocketAddress(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), length: length)
        }
    }

    /// Strips the brackets of an IPv6 literal such as "[::1]".
    static func unbracketed(_ host: String) -> String {
        if host.hasPrefix("[") && host.hasSuffix("]") && host.count >= 2 {
            return String(host.dropFirst().dropLast())
        }
        return host
    }

    /// Resolves a host (name or numeric, IPv4 or IPv6) and port with getaddrinfo.
    ///
    /// `passive` asks for addresses to bind rather than to connect to.
    static func resolve(host: String, port: UInt16, passive: Bool) throws(TLSError) -> [SocketAddress] {
        let name = unbracketed(host)
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = POSIX.streamSocketType
        // No AI_ADDRCONFIG: glibc then drops "::1" on hosts whose only IPv6 address is loopback.
        hints.ai_flags = passive ? AI_PASSIVE : 0
        var list: UnsafeMutablePointer<addrinfo>? = nil
        let status = getaddrinfo(name.isEmpty ? nil : name, String(port), &hints, &list)
        guard status == 0, let first = list else {
            let reason = status == EAI_SYSTEM ? POSIX.describe(errno) : String(cString: gai_strerror(status))
            throw .resolveFailed(host: host, reason: reason)
        }
        defer { freeaddrinfo(first) }
        var addresses: [SocketAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            if let address = entry.pointee.ai_addr,
                entry.pointee.ai_family == AF_INET || entry.pointee.ai_family == AF_INET6
            {
                addresses.append(SocketAddress(address, length: entry.pointee.ai_addrlen))
            }
            cursor = entry.pointee.ai_next
        }
        if addresses.isEmpty { throw .resolveFailed(host: host, reason: "no IPv4 or IPv6 address") }
        return addresses
    }
}
