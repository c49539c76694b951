internal import CSesameShims

/// epoll event bits, read once from the C headers.
enum EpollEvents {
    static let readable = CSesameShims_EPOLLIN()
    static let writable = CSesameShims_EPOLLOUT()
    static let error = CSesameShims_EPOLLERR()
    static let hangUp = CSesameShims_EPOLLHUP()
}
