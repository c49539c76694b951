import Foundation

// Fuzz target `location`: a redirect's Location, resolved against the request it answers. What
// is followed is an http or https URL with a host, and nothing tied to the old origin (its
// credentials, cookies, Host) goes along to another.

private let locationBase = URL(string: "https://ada:s3cret@www.example.test:8443/dir/page?q=1")!  // safe: literal

func fuzzLocation(_ bytes: UnsafeRawBufferPointer) {
    guard let control = bytes.first else { return }
    let statuses = [301, 302, 303, 307, 308]
    var headers = HTTPHeaders()
    headers.add(name: "Location", value: String(decoding: bytes.dropFirst(), as: UTF8.self))
    let response = HTTPResponse(
        status: statuses[Int(control) % statuses.count],
        reason: "Redirect",
        headers: headers,
        url: locationBase
    )
    var request = HTTPRequest(url: locationBase)
    request.method = control & 0x80 == 0 ? "GET" : "POST"
    for name in RedirectPolicy.originBoundHeaders { request.headers.add(name: name, value: "secret") }
    guard let next = RedirectPolicy.nextRequest(after: response, for: request) else { return }
    let scheme = next.url.scheme?.lowercased()
    fuzzRequire(scheme == "http" || scheme == "https", "followed to \(next.url)")
    fuzzRequire(next.url.host != nil)
    if !RedirectPolicy.sameOrigin(locationBase, next.url) {
        // The password in the request's URL names its own origin: it never labels another.
        fuzzRequire(next.url.password(percentEncoded: false) != "s3cret", "the password went along to \(next.url)")
        for name in RedirectPolicy.originBoundHeaders {
            fuzzRequire(!next.headers.contains(name), "\(name) went along to \(next.url)")
        }
    }
    _ = Origin(next.url)
}
