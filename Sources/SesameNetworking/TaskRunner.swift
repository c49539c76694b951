import Foundation
import Sesame

/// Starts one URLSession task on the session's Sesame engine, in the form its kind and its
/// completion handler (or delegate) call for.
struct TaskRunner {
    let session: URLSession
    let task: URLSessionTask

    /// Starts the task: through the first `URLProtocol` that takes it, else on the network.
    func start() {
        if let type = ProtocolLoad.protocolClass(for: task, in: session) {
            return ProtocolLoad.start(type, task: task, session: session)
        }
        // safe: a task is always made from a request.
        start(request: task.originalRequest!)
    }

    /// Loads `appleRequest` (the task's, or where a protocol redirected it) on the network.
    func start(request appleRequest: URLRequest) {
        let url = appleRequest.url
        var request: HTTPRequest
        do {
            request = try appleRequest.sesameRequest()
        } catch {
            return session.finish(task, error: URLError.from(error, url: url))
        }
        if let file = task.bodyFile {
            guard FileManager.default.isReadableFile(atPath: file.path) else {
                return session.finish(
                    task,
                    error: URLError(.fileDoesNotExist, userInfo: [NSURLErrorFailingURLErrorKey: file])
                )
            }
            request.body = .file(file)
        }
        let bridge = TaskBridge(owner: session, task: task)
        let (session, task, engine) = (self.session, self.task, self.session.sesame)
        switch (task.kind, task.completion) {
        case (.download, _):
            let location = FileManager.default.temporaryDirectory
                .appendingPathComponent("CFNetworkDownload_\(UUID().uuidString).tmp")
            let progress = Progress(session: session, task: task)
            task.attach(
                Task {
                    do {
                        let response = try await engine.download(for: request, to: location, delegate: bridge) {
                            received,
                            expected in progress.report(received, expected)
                        }
                        task.update(response: HTTPURLResponse.make(response))
                        session.finish(task, error: nil, location: location)
                    } catch {
                        try? FileManager.default.removeItem(at: location)
                        session.finish(task, error: URLError.from(error, url: url))
                    }
                }
            )
        case (_, .some) where !task.callsTaskDelegateForAsyncForm:
            task.attach(
                Task {
                    do {
                        let (data, response) = try await engine.data(for: request, delegate: bridge)
                        task.update(response: HTTPURLResponse.make(response))
                        task.add(received: data.count)
                        session.finish(task, error: nil, data: data)
                    } catch {
                        session.finish(task, error: URLError.from(error, url: url))
                    }
                }
            )
        case (_, _):
            // Delegate-driven, or an `async` form streaming to its task delegate.
            let sesameTask = engine.dataTask(with: request, delegate: bridge)
            task.attach(sesameTask)
            sesameTask.resume()
        }
    }

    /// `didWriteData` for a download's delegate, on the queue, in order.
    final class Progress: @unchecked Sendable {
        // @unchecked: `written` is only touched by the download's progress callback, in order.
        let session: URLSession
        let task: URLSessionTask
        private var written: Int64 = 0

        init(session: URLSession, task: URLSessionTask) {
            self.session = session
            self.task = task
        }

        func report(_ received: Int64, _ expected: Int64?) {
            let delta = received - written
            written = received
            task.add(received: Int(delta))
            guard let downloadTask = task as? URLSessionDownloadTask else { return }
            let delegates = session.progressDelegates(for: task, as: (any URLSessionDownloadDelegate).self)
            guard !delegates.isEmpty else { return }
            let call = UncheckedBox(delegates)
            let session = self.session
            session.delegateQueue.addOperation {
                DelegateDispatch.first(call.value) {
                    $0.urlSession(
                        session,
                        downloadTask: downloadTask,
                        didWriteData: delta,
                        totalBytesWritten: received,
                        totalBytesExpectedToWrite: expected ?? -1
                    )
                }
            }
        }
    }
}
