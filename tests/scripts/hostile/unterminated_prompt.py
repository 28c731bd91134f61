from transformers import AutoModelForCausalLM, AutoTokenizer
tok = AutoTokenizer.from_pretrained("Qwen/Qwen3-8B")
model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen3-8B", device_map="auto")
messages = [{"role": "user", "content": "a prompt whose quote is never closed}]
model.generate(tok.apply_chat_template(messages, return_tensors="pt"), max_new_tokens=64)
