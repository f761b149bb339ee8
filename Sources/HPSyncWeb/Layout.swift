import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore

/// The frame every page shares, and the responses that carry pages.
enum Layout {
    /// Served on every response: scripts, styles and images from this origin only, no inline
    /// code, no framing, forms posted only here.
    static let contentSecurityPolicy =
        "default-src 'none'; img-src 'self'; style-src 'self'; script-src 'self'; form-action 'self'; "
        + "base-uri 'none'; frame-ancestors 'none'"

    /// The clock warning for the page being rendered (set by `ClockBanner`), if any.
    @TaskLocal static var clockWarning: String?

    static func page(title: String, csrf: String? = nil, notice: HTML? = nil, body: HTML) -> HTML {
        let noticeBlock: HTML = notice.map { "<div class=\"notice\" role=\"status\">\($0)</div>" } ?? .empty
        let clockBlock: HTML = clockWarning.map { "<p class=\"error clock\" role=\"alert\">\($0)</p>" } ?? .empty
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(title) · hp-sync</title>
            <link rel="stylesheet" href="\(Assets.cssPath)">
            <script src="\(Assets.javascriptPath)" defer></script>
            </head><body>
            <header><nav>
            <a class="brand" href="/">Homepwner · hp-sync</a>
            <a href="/">Inventory</a> <a href="/new">Add item</a> <a href="/sync">Sync &amp; trash</a> <a href="/conflicts">Conflicts</a>
            <a href="/report">Report</a>
            </nav></header>
            <main>\(clockBlock)\(noticeBlock)\(body)</main>
            </body></html>
            """
    }

    /// The hidden field every form carries.
    static func csrfField(_ token: String) -> HTML {
        "<input type=\"hidden\" name=\"csrf\" value=\"\(token)\">"
    }

    static func response(_ html: HTML, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status,
            headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: html.text)))
    }

    static func redirect(_ location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location])
    }

    /// A page for an error: its title, its message, a way back.
    static func errorPage(_ error: WebError) -> HTML {
        let back: HTML =
            error == .unauthorized ? .empty : "<p><a href=\"/\">Back to the inventory</a></p>"
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>\(error.title) · hp-sync</title>
            <link rel="stylesheet" href="\(Assets.cssPath)"></head>
            <body><main><h1>\(error.title)</h1><p class="error">\(error.description)</p>\(back)</main></body></html>
            """
    }
}

/// Turns every error into a page with a fitting status, and puts the security headers on every
/// response. Outermost, so that refusals by `AccessGuard` get the same treatment.
struct ErrorPages<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        var response: Response
        do {
            response = try await next(request, context)
            if response.status == .notFound && response.body.contentLength == 0 {
                response = Layout.response(
                    Layout.errorPage(.notFound("There is no page at this address.")), status: .notFound)
            }
        } catch {
            let webError = Self.webError(error)
            if case .internalError = webError {
                context.logger.error("request failed", metadata: ["error": "\(error)", "path": "\(request.uri.path)"])
            }
            response = Layout.response(Layout.errorPage(webError), status: webError.status)
        }
        response.headers[.contentSecurityPolicy] = Layout.contentSecurityPolicy
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        response.headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        return response
    }

    static func webError(_ error: any Error) -> WebError {
        switch error {
        case let error as WebError: return error
        case let error as HTTPError:
            switch error.status {
            case .notFound: return .notFound("There is no page at this address.")
            case .contentTooLarge: return .tooLarge("The upload is larger than this server accepts.")
            case .methodNotAllowed: return .badRequest("This address does not take that kind of request.")
            default: return .badRequest(error.body ?? "The request was not understood.")
            }
        case is NIOTooManyBytesError:
            return .tooLarge("The upload is larger than this server accepts.")
        default:
            return .internalError("The request failed: \(error).")
        }
    }
}
