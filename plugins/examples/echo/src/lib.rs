use warden_sdk::{
    Annotations, Context, Output, Tool, ToolError, register,
    serde_json::{Value, json},
};

/// Repeats text back, `times` times.
struct Echo;

#[derive(serde::Deserialize)]
struct Input {
    text: String,
    times: Option<usize>,
}

impl Tool for Echo {
    type Input = Input;
    const NAME: &'static str = "echo";
    const DESCRIPTION: &'static str = "Repeat the given text back.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "times": {"type": "integer", "minimum": 1, "maximum": 10}
            },
            "required": ["text"]
        })
    }

    fn call(&self, input: Input, _cx: &Context) -> Result<Output, ToolError> {
        Ok(Output::text(input.text.repeat(input.times.unwrap_or(1))))
    }
}

register!(Echo);
