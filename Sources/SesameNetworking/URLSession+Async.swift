import Foundation

/// The `async` forms: each runs a task with a completion handler and waits for it; cancelling the
/// calling task cancels the URLSession task.
extension URLSession {
    /// The body and response of `request`; `delegate` is the task's own delegate.
    public func data(
        for request: URLRequest,
        delegate: (any URLSessionTaskDelegate)? = nil
    ) async throws -> (Data, URLResponse) {
        let box = ResultBox<(Data, URLResponse)>()
        let task = dataTask(with: request) { data, response, error in
            if let data, let response {
                box.set(.success((data, response)))
            } else {
                box.set(.failure(error ?? URLError(.unknown)))
            }
        }
        return try await run(task, delegate: delegate, box)
    }

    /// Loads `url` and returns its body and response; `delegate` hears the task's callbacks before
    /// the session's delegate.
    public func data(from url: URL, delegate: (any URLSessionTaskDelegate)? = nil) async throws -> (Data, URLResponse) {
        try await data(for: URLRequest(url: url), delegate: delegate)
    }

    /// Uploads `bodyData` as `request`'s body and returns the response body and response.
    public func upload(
        for request: URLRequest,
        from bodyData: Data,
        delegate: (any URLSessionTaskDelegate)? = nil
    ) async throws -> (Data, URLResponse) {
        var request = request
        request.httpBody = bodyData
        return try await data(for: request, delegate: delegate)
    }

    /// Uploads the file at `fileURL` as `request`'s body and returns the response body and
    /// response.
    public func upload(
        for request: URLRequest,
        fromFile fileURL: URL,
        delegate: (any URLSessionTaskDelegate)? = nil
    ) async throws -> (Data, URLResponse) {
        let box = ResultBox<(Data, URLResponse)>()
        let task = uploadTask(with: request, fromFile: fileURL) { data, response, error in
            if let data, let response {
                box.set(.success((data, response)))
            } else {
                box.set(.failure(error ?? URLError(.unknown)))
            }
        }
        return try await run(task, delegate: delegate, box)
    }

    /// Downloads into a temporary file that the caller moves or removes.
    public func download(
        for request: URLRequest,
        delegate: (any URLSessionTaskDelegate)? = nil
    ) async throws -> (URL, URLResponse) {
        let box = ResultBox<(URL, URLResponse)>()
        let task = downloadTask(with: request) { location, response, error in
            guard let location, let response else { return box.set(.failure(error ?? URLError(.unknown))) }
            // Apple's async form leaves the file to the caller.
            let kept = location.deletingLastPathComponent()
                .appendingPathComponent("CFNetworkDownload_\(UUID().uuidString).tmp")
            do {
                try FileManager.default.moveItem(at: location, to: kept)
                box.set(.success((kept, response)))
            } catch {
                box.set(.failure(error))
            }
        }
        return try await run(task, delegate: delegate, box)
    }

    /// Downloads `url` to a temporary file and returns its location (the caller moves or removes
    /// it) and the response.
    public func download(
        from url: URL,
        delegate: (any URLSessionTaskDelegate)? = nil
    ) async throws -> (URL, URLResponse) {
        try await download(for: URLRequest(url: url), delegate: delegate)
    }

    func run<T>(
        _ task: URLSessionTask,
        delegate: (any URLSessionTaskDelegate)?,
        _ box: ResultBox<T>
    ) async throws -> T {
        task.delegate = delegate
        task.callsTaskDelegateForAsyncForm = delegate != nil
        return try await withTaskCancellationHandler {
            try await box.wait(starting: { task.resume() })
        } onCancel: {
            task.cancel()
        }
    }
}
