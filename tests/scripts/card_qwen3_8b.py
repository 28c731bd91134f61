# Quickstart in the form of the Qwen3 model cards (Qwen/Qwen3-8B, "Quickstart"): load in the
# checkpoint's dtype with device_map="auto", one user message through the chat template,
# generate with the card's max_new_tokens=32768.
from transformers import AutoModelForCausalLM, AutoTokenizer

model_name = "Qwen/Qwen3-8B"

# the tokenizer and the model
tokenizer = AutoTokenizer.from_pretrained(model_name)
model = AutoModelForCausalLM.from_pretrained(
    model_name,
    torch_dtype="auto",
    device_map="auto"
)

# the model input
prompt = "Explain in a paragraph what a KV cache is."
messages = [
    {"role": "user", "content": prompt}
]
text = tokenizer.apply_chat_template(
    messages,
    tokenize=False,
    add_generation_prompt=True,
    enable_thinking=True  # thinking mode, the card's default
)
model_inputs = tokenizer([text], return_tensors="pt").to(model.device)

# text completion
generated_ids = model.generate(
    **model_inputs,
    max_new_tokens=32768
)
output_ids = generated_ids[0][len(model_inputs.input_ids[0]):].tolist()

# the thinking part ends at </think> (token 151668)
try:
    index = len(output_ids) - output_ids[::-1].index(151668)
except ValueError:
    index = 0
thinking = tokenizer.decode(output_ids[:index], skip_special_tokens=True).strip("\n")
content = tokenizer.decode(output_ids[index:], skip_special_tokens=True).strip("\n")
print("thinking:", thinking)
print("content:", content)
