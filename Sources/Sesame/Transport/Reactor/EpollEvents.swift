internal import CSesameShims

/// epoll event bits, read once from the C headers.
enum EpollEvents {
    static let readable = CSesameShims_EPOLLIN()
    static let writable = CSesameShims_EPOLLOUT()
    static let error = CSesameShims_EPOLLERR()
    static let hangUp = CSesameShims_EPOLLHUP()
    /// The peer shut down its sending side (a FIN arrived); bytes sent before it may still wait.
    static let peerClosed = CSesameShims_EPOLLRDHUP()
}
