//! The Python template's frames (src/channel/table, channel `PythonTemplate`): the fork request
//! the host writes, and the one reader of what the template says.

use serde_json::{json, Map, Value};

/// What the template says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    Ready { library_bytes: u64 },
    Forked { id: u64, pid: u64 },
    ForkFailed { id: u64, message: String },
}

/// One message from the template, or `None` when it is no frame of the table.
pub fn decode_reply(bytes: &[u8]) -> Option<Reply> {
    let value: Value = serde_json::from_slice(bytes).ok()?;
    let fields = value.as_object()?;
    let count = |name: &str| fields.get(name)?.as_u64();
    match fields.get("type")?.as_str()? {
        "template-ready" => Some(Reply::Ready { library_bytes: count("libraryBytes")? }),
        "forked" => Some(Reply::Forked { id: count("id")?, pid: count("pid")? }),
        "fork-failed" => {
            Some(Reply::ForkFailed { id: count("id")?, message: fields.get("message")?.as_str()?.to_string() })
        }
        _ => None,
    }
}

/// `{"type":"fork","id":…,"fds":…}`: all the template learns of a run (its plan comes in the
/// first descriptor, a pipe only the forked child reads).
pub fn fork_request(id: u64, fds: usize) -> String {
    let mut fields = Map::new();
    fields.insert("type".into(), json!("fork"));
    fields.insert("id".into(), json!(id));
    fields.insert("fds".into(), json!(fds));
    Value::Object(fields).to_string()
}

/// The run's plan, as the forked child reads it from its plan pipe.
pub struct ChildPlan<'a> {
    /// The helper's plan, as its arguments.
    pub args: &'a [String],
    pub env: &'a [[String; 2]],
    /// The run's own `bootstrap.py`, which the child's `__main__` and `argv` name.
    pub bootstrap: &'a str,
    /// CPU, address space and file size, each soft then hard.
    pub limits: [u64; 6],
}

/// `{"type":"plan",…}`, written whole into the plan pipe.
pub fn child_plan(plan: &ChildPlan) -> String {
    let mut fields = Map::new();
    fields.insert("type".into(), json!("plan"));
    fields.insert("args".into(), json!(plan.args));
    fields.insert("env".into(), json!(plan.env));
    fields.insert("bootstrap".into(), json!(plan.bootstrap));
    fields.insert("limits".into(), json!(plan.limits));
    Value::Object(fields).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channel::table::check::{reader_agrees, writes_exactly};
    use crate::channel::table::{Channel::PythonTemplate, Dir::*};

    #[test]
    fn the_reader_answers_to_the_table() {
        let ty = |reply: &Reply| match reply {
            Reply::Ready { .. } => "template-ready",
            Reply::Forked { .. } => "forked",
            Reply::ForkFailed { .. } => "fork-failed",
        };
        reader_agrees(PythonTemplate, ToHost, decode_reply, ty);
        assert_eq!(decode_reply(br#"{"type":"forked","id":3,"pid":77}"#), Some(Reply::Forked { id: 3, pid: 77 }));
    }

    #[test]
    fn the_fork_request_and_the_plan_are_the_tables() {
        let args = ["exec".to_string(), "--ns".to_string()];
        let env = [["TMPDIR".to_string(), "/tmp/x/tmp".to_string()]];
        let plan = ChildPlan {
            args: &args,
            env: &env,
            bootstrap: "/tmp/x/bootstrap.py",
            limits: [60, 61, u64::MAX, u64::MAX, 1 << 26, 1 << 26],
        };
        let fork = fork_request(9, 7) + "\n";
        let plan = child_plan(&plan) + "\n";
        writes_exactly(PythonTemplate, ToChild, &[&fork, &plan], &[]);
        // RLIM_INFINITY travels exactly (Python reads any integer).
        assert!(plan.contains("18446744073709551615"));
    }
}
