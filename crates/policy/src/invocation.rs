//! The variables one invocation (policy, binding, param) binds: the request's objects, the CEL
//! `request`, `namespaceObject`, `params`, the authorizer, and the policy's lazy `variables`.

use celer_cel::{Activation, Json, Value};

use crate::compiled::PolicyCommon;

/// What an invocation's expressions read. Everything borrows from the request's parse or from
/// the lookup's objects.
#[derive(Debug, Clone)]
pub struct Inputs<'a> {
    pub object: Option<&'a Json>,
    pub old_object: Option<&'a Json>,
    pub request: &'a Json,
    pub namespace_object: Option<&'a Json>,
    pub params: Option<&'a Json>,
    /// The values of `authorizer` and `authorizer.requestResource`, when an authorizer is set.
    pub authorizer: Option<(Value<'static>, Value<'static>)>,
}

fn json_or_null(v: Option<&Json>) -> Value<'_> {
    v.map_or(Value::Null, Value::from_json)
}

/// Binds an invocation's inputs; `with_authorizer` is false for messageExpressions and audit
/// annotations, which run without it.
pub fn bind_inputs<'a>(
    activation: &mut Activation<'a>,
    common: &'a PolicyCommon,
    inputs: &Inputs<'a>,
    with_authorizer: bool,
) {
    let slots = common.env.slots;
    activation.set(slots.object, json_or_null(inputs.object));
    activation.set(slots.old_object, json_or_null(inputs.old_object));
    activation.set(slots.request, Value::from_json(inputs.request));
    activation.set(
        slots.namespace_object,
        json_or_null(inputs.namespace_object),
    );
    if let Some(slot) = slots.params {
        activation.set(slot, json_or_null(inputs.params));
    }
    if with_authorizer && let Some((authorizer, resource)) = &inputs.authorizer {
        activation.set(slots.authorizer, authorizer.clone());
        activation.set(slots.request_resource, resource.clone());
    }
    for v in &common.variables {
        if let Ok(program) = &v.expression.program {
            activation.set_lazy(v.slot, program);
        }
    }
}
