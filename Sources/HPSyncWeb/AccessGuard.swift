import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore

/// The secrets of one `hp-sync web` run: the access token printed with the URL, the cookie that
/// keeps it, and the CSRF token every form carries. All random per run, never stored.
public struct AccessSecrets: Sendable {
    public let token: String
    let csrf: String
    let cookieName: String

    public init(token: String = AccessSecrets.random(bytes: 32)) {
        self.token = token
        csrf = Self.random(bytes: 32)
        // A name per run, so that two instances on one host (cookies ignore the port) do not
        // overwrite each other's cookie.
        cookieName = "hpsync_" + Self.random(bytes: 4)
    }

    /// Hex of `bytes` random bytes from the system's CSPRNG (getrandom on Linux).
    public static func random(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        var result: [UInt8] = []
        for _ in 0..<bytes {
            let byte = UInt8.random(in: 0...255, using: &generator)
            result += [digits[Int(byte >> 4)], digits[Int(byte & 15)]]
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// Compares in time independent of where the strings differ.
    static func matches(_ given: String, _ expected: String) -> Bool {
        let a = Array(given.utf8)
        let b = Array(expected.utf8)
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}

/// Lets a request through only with the access token, and only from the browser's own pages.
///
/// - `?token=` in any URL: checked, kept in an HttpOnly, SameSite=Strict cookie, then a
///   redirect to the same URL without it, so the token does not stay in the address bar or
///   the history.
/// - Otherwise the cookie must hold the token, else 401.
/// - A `Host` that is not loopback is refused (DNS rebinding), and so is a state-changing
///   request whose `Origin` is another site; the CSRF token in each form is checked by the
///   handler that reads the form (`WebApp.form`).
struct AccessGuard<Context: RequestContext>: RouterMiddleware {
    let secrets: AccessSecrets

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        if let authority = request.head.authority ?? request.headers[HTTPField.Name("Host")!],
            !Self.isLoopbackAuthority(authority)
        {
            throw WebError.forbidden("This server answers only to localhost addresses.")
        }
        if let given = request.uri.queryParameters.get("token") {
            guard AccessSecrets.matches(given, secrets.token) else { throw WebError.unauthorized }
            var response = Response(status: .seeOther, headers: [.location: Self.withoutToken(request.uri)])
            response.setCookie(
                Cookie(name: secrets.cookieName, value: secrets.token, path: "/", httpOnly: true, sameSite: .strict))
            return response
        }
        guard let cookie = request.cookies[secrets.cookieName], AccessSecrets.matches(cookie.value, secrets.token)
        else { throw WebError.unauthorized }
        if request.method != .get && request.method != .head {
            if let site = request.headers[HTTPField.Name("Sec-Fetch-Site")!], site == "cross-site" {
                throw WebError.forbidden("Forms of this app must be sent from its own pages.")
            }
            if let origin = request.headers[.origin], origin != "null",
                !Self.isLoopbackAuthority(String(origin.drop { $0 != "/" }.drop { $0 == "/" }))
            {
                throw WebError.forbidden("Forms of this app must be sent from its own pages.")
            }
        }
        return try await next(request, context)
    }

    /// Whether `authority` (`host[:port]`) names a loopback host.
    static func isLoopbackAuthority(_ authority: String) -> Bool {
        var host = Substring(authority)
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
            host = host[host.index(after: host.startIndex)..<close]
        } else if let colon = host.lastIndex(of: ":") {
            host = host[..<colon]
        }
        return ListenAddress.isLoopback(String(host))
    }

    /// The request's path and query without the `token` parameter.
    static func withoutToken(_ uri: URI) -> String {
        let kept = (uri.query ?? "").split(separator: "&").filter { !$0.hasPrefix("token=") && $0 != "token" }
        // "//host/..." or "/\\host" in a Location header would leave this site.
        let path = uri.path.hasPrefix("/") && !uri.path.hasPrefix("//") && !uri.path.contains("\\") ? uri.path : "/"
        return kept.isEmpty ? path : path + "?" + kept.joined(separator: "&")
    }
}
