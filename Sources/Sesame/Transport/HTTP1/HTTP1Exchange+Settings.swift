extension HTTP1Exchange {
    /// What an exchange takes from its session's configuration, taken out once per session:
    /// handing the whole configuration to every request retained and released each reference in it.
    struct Settings: Sendable {
        /// Fields added to a request that has none of that name: the default headers, then
        /// `Accept-Encoding` when bodies are decoded.
        let addedHeaders: [HTTPHeaders.Field]
        let requestTimeout: Duration
        /// The decoded-body limit; nil when bodies are not decoded.
        let decodedBodyLimit: Int?
        let eventObserver: (@Sendable (SessionEvent) -> Void)?

        init(_ configuration: SessionConfiguration) {
            var added = Array(configuration.defaultHeaders)
            if configuration.decodesContent {
                added.append(HTTPHeaders.Field(name: "Accept-Encoding", value: "gzip, deflate"))
            }
            addedHeaders = added
            requestTimeout = configuration.requestTimeout
            decodedBodyLimit = configuration.decodesContent ? configuration.maximumDecodedBodySize : nil
            eventObserver = configuration.eventObserver
        }
    }
}
