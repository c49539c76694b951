import FoundationEssentials
import Glibc
import Sesame

/// The request a fetch sends: its URL, `-X`, `-H`, and the body options: `-d`-family (form), `-F/--form` (multipart), `--json`.
enum FetchBody {
    /// The request the options describe: URL, method, headers and body.
    static func request(_ options: FetchOptions) throws -> HTTPRequest {
        // safe: parse() refuses options without a URL.
        var request = HTTPRequest(url: options.url!)
        let hasContentType = options.headers.contains { $0.0.lowercased() == "content-type" }
        if let data = options.data {
            request.method = "POST"
            request.body = .data(Data(data))
            if options.dataIsForm && !hasContentType {
                let charset = options.charset.map { "; charset=\($0.name.lowercased())" } ?? ""
                request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded" + charset)
            }
        } else if let json = options.json {
            request.method = "POST"
            request.body = .data(Data(json))
            if !hasContentType { request.headers.add(name: "Content-Type", value: "application/json") }
            request.headers.add(name: "Accept", value: "application/json")
        } else if !options.formParts.isEmpty {
            request.method = "POST"
            var form = MultipartFormData()
            for part in options.formParts { try add(part, to: &form) }
            form.apply(to: &request)
        }
        if let method = options.method { request.method = method }
        for (name, value) in options.headers { request.headers.add(name: name, value: value) }
        return request
    }

    /// curl's `-F`: `name=text`, `name=<file` (a text field read from a file),
    /// `name=@file[;type=MIME][;filename=NAME]` (a file, streamed).
    static func add(_ argument: String, to form: inout MultipartFormData) throws {
        guard let equals = argument.firstIndex(of: "="), equals != argument.startIndex else {
            throw Arguments.UsageError(description: "-F needs name=content, not '\(argument)'")
        }
        let name = String(argument[..<equals])
        let content = String(argument[argument.index(after: equals)...])
        if content.hasPrefix("@") {
            var pieces = content.dropFirst().split(separator: ";", omittingEmptySubsequences: false).map(String.init)
            let path = pieces.removeFirst()
            var type: String?
            var fileName: String?
            for piece in pieces {
                if piece.lowercased().hasPrefix("type=") { type = String(piece.dropFirst(5)) }
                if piece.lowercased().hasPrefix("filename=") {
                    fileName = piece.dropFirst(9).trimming(["\""])
                }
            }
            do {
                try form.appendFile(at: URL(fileURLWithPath: path), name: name, fileName: fileName, mimeType: type)
            } catch {
                throw Arguments.UsageError(description: "-F \(name): \(error)")
            }
        } else if content.hasPrefix("<") {
            let bytes: [UInt8]
            do {
                bytes = try UserFile.read(String(content.dropFirst()), as: .requestData)
            } catch {
                throw Arguments.UsageError(description: "-F \(name): \(error.detail)")
            }
            form.append(Data(bytes), name: name, fileName: nil, mimeType: nil)
        } else {
            form.append(content, name: name)
        }
    }
}
