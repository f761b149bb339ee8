import NIOCore

/// A submitted form: text fields (repeatable) and, for multipart bodies, at most a few files.
///
/// Both encodings are parsed here, with no dependency: `application/x-www-form-urlencoded` for
/// the plain forms, `multipart/form-data` for the photo uploads. The body has already been
/// collected with a size bound; parsing never copies a file's bytes more than once.
struct Form: Sendable {
    /// One uploaded file: its bytes as sent, and the file name the browser gave (for messages only).
    struct File: Sendable {
        var filename: String
        var bytes: ByteBuffer
    }

    private(set) var fields: [String: [String]] = [:]
    private(set) var files: [String: File] = [:]

    /// The first value of `name`, or nil.
    subscript(_ name: String) -> String? { fields[name]?.first }

    /// Every value of `name`, in order.
    func all(_ name: String) -> [String] { fields[name] ?? [] }

    /// Parses `body` according to `contentType`; another type is a 415.
    static func parse(contentType: String?, body: ByteBuffer) throws(WebError) -> Form {
        let type = (contentType ?? "").lowercased()
        if type.hasPrefix("application/x-www-form-urlencoded") {
            return urlEncoded(String(buffer: body))
        }
        if type.hasPrefix("multipart/form-data") {
            guard let boundary = boundary(in: contentType ?? "") else {
                throw .badRequest("The upload has no multipart boundary.")
            }
            return try multipart(body, boundary: boundary)
        }
        throw .unsupportedMediaType("Send the form as application/x-www-form-urlencoded or multipart/form-data.")
    }

    /// `a=1&b=two+words&c=%3Cx%3E`.
    static func urlEncoded(_ text: String) -> Form {
        var form = Form()
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = percentDecode(parts[0])
            let value = parts.count > 1 ? percentDecode(parts[1]) : ""
            form.fields[name, default: []].append(value)
        }
        return form
    }

    static func percentDecode(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"): bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = iterator.next(), let low = iterator.next(),
                    let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
                else {
                    bytes.append(byte)
                    continue
                }
                bytes.append(value)
            default: bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func boundary(in contentType: String) -> String? {
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingSpaces().lowercased() == "boundary" else { continue }
            var value = pair[1].trimmingSpaces()
            if value.hasPrefix("\"") && value.hasSuffix("\"") && value.count >= 2 {
                value = String(value.dropFirst().dropLast())
            }
            return value.isEmpty || value.utf8.count > 200 ? nil : value
        }
        return nil
    }

    /// RFC 7578: parts separated by `--boundary`, each with headers, a blank line and the bytes.
    static func multipart(_ body: ByteBuffer, boundary: String) throws(WebError) -> Form {
        let bytes = body.readableBytesView
        let delimiter = Array(("--" + boundary).utf8)
        let separator = Array(("\r\n--" + boundary).utf8)
        guard var position = find(delimiter, in: bytes, from: bytes.startIndex) else {
            throw .badRequest("The upload is not a valid multipart form.")
        }
        var form = Form()
        position += delimiter.count
        while true {
            // After a delimiter: "--" ends the body, CRLF starts a part.
            if bytes[position...].starts(with: Array("--".utf8)) { return form }
            guard bytes[position...].starts(with: Array("\r\n".utf8)) else {
                throw .badRequest("The upload is not a valid multipart form.")
            }
            position += 2
            guard let headerEnd = find(Array("\r\n\r\n".utf8), in: bytes, from: position),
                let partEnd = find(separator, in: bytes, from: headerEnd + 4)
            else { throw .badRequest("The upload is cut short; send it again.") }
            let headers = String(decoding: bytes[position..<headerEnd], as: UTF8.self)
            let contentStart = headerEnd + 4
            if let (name, filename) = disposition(headers) {
                if let filename {
                    // A chosen file of 0 bytes is kept (it gets its own message); an empty part
                    // without a file name is a file input left empty.
                    if partEnd > contentStart || !filename.isEmpty {
                        let offset = contentStart - bytes.startIndex
                        form.files[name] = File(
                            filename: filename,
                            bytes: body.getSlice(at: body.readerIndex + offset, length: partEnd - contentStart)!)
                    }
                } else {
                    form.fields[name, default: []].append(
                        String(decoding: bytes[contentStart..<partEnd], as: UTF8.self))
                }
            }
            position = partEnd + separator.count
        }
    }

    /// The `name` and `filename` of a part's Content-Disposition header.
    private static func disposition(_ headers: String) -> (String, String?)? {
        for line in headers.split(separator: "\r\n") {
            let pair = line.split(separator: ":", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingSpaces().lowercased() == "content-disposition" else { continue }
            var name: String?
            var filename: String?
            for parameter in pair[1].split(separator: ";").dropFirst() {
                let keyValue = parameter.split(separator: "=", maxSplits: 1)
                guard keyValue.count == 2 else { continue }
                var value = keyValue[1].trimmingSpaces()
                if value.hasPrefix("\"") && value.hasSuffix("\"") && value.count >= 2 {
                    value = String(value.dropFirst().dropLast())
                }
                switch keyValue[0].trimmingSpaces().lowercased() {
                case "name": name = value
                case "filename": filename = value
                default: break
                }
            }
            return name.map { ($0, filename) }
        }
        return nil
    }

    private static func find(_ needle: [UInt8], in haystack: ByteBufferView, from start: Int) -> Int? {
        guard let first = needle.first, haystack.endIndex - start >= needle.count else { return nil }
        var index = start
        let last = haystack.endIndex - needle.count
        while index <= last {
            guard let hit = haystack[index...last].firstIndex(of: first) else { return nil }
            if haystack[hit..<(hit + needle.count)].elementsEqual(needle) { return hit }
            index = hit + 1
        }
        return nil
    }
}

extension Substring {
    fileprivate func trimmingSpaces() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
