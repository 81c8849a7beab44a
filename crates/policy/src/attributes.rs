//! What matching reads of an admission request: the resource, kind, operation, name and
//! namespace, and the objects (for objectSelector). Borrowed from the request's one parse.

use celer_cel::Json;

/// An admission operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    Create,
    Update,
    Delete,
    Connect,
}

impl Operation {
    /// The API spelling (`CREATE`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
            Operation::Connect => "CONNECT",
        }
    }

    pub fn parse(s: &str) -> Option<Operation> {
        match s {
            "CREATE" => Some(Operation::Create),
            "UPDATE" => Some(Operation::Update),
            "DELETE" => Some(Operation::Delete),
            "CONNECT" => Some(Operation::Connect),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct GroupVersionKind<'a> {
    pub group: &'a str,
    pub version: &'a str,
    pub kind: &'a str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct GroupVersionResource<'a> {
    pub group: &'a str,
    pub version: &'a str,
    pub resource: &'a str,
}

/// The request as matching sees it (`admission.Attributes` upstream).
#[derive(Debug, Clone, Copy)]
pub struct Attributes<'a> {
    pub kind: GroupVersionKind<'a>,
    pub resource: GroupVersionResource<'a>,
    /// Empty for the main resource.
    pub sub_resource: &'a str,
    pub operation: Operation,
    pub name: &'a str,
    /// Empty for cluster-scoped resources.
    pub namespace: &'a str,
    /// `None` when absent or JSON null (DELETE has no object; CREATE no oldObject).
    pub object: Option<&'a Json>,
    pub old_object: Option<&'a Json>,
}
