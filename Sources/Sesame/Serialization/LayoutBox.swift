/// An immutable value kept behind one reference.
///
/// Foundation's `URL` and `Data` come from a library built for evolution: their size is known only
/// at run time, and so is that of any struct or enum holding one directly. Every copy of such a
/// struct then goes through the runtime's value witnesses, and every async function keeping one
/// across a suspension allocates room for it separately. ``HTTPRequest`` and ``HTTPResponse``
/// are copied along each request's whole path; holding their URL and body in a box gives them a
/// layout the compiler knows, at the cost of one allocation when a URL or body is set.
final class LayoutBox<Value: Sendable>: Sendable {
    let value: Value

    init(_ value: Value) { self.value = value }
}
