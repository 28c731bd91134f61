# Entry points for a fresh machine. `make demo` builds vramfit, inspects an embedded catalog
# model, plans a vLLM start-up that runs out of KV cache, searches the settings that fit, and
# diagnoses a published OOM log; `make test` builds and runs every test. Both install missing
# Debian build packages first (tools/install-deps.sh; needs root or sudo on a fresh machine).
.PHONY: all deps build demo test asan ubsan bench fuzz clean

all: build

deps:
	@bash tools/install-deps.sh
	@bash tools/install-browser-deps.sh

build: deps
	@cmake --preset default >/dev/null
	@cmake --build --preset default

demo: build
	./build/vramfit inspect qwen3-30b-a3b-gptq-int4
	./build/vramfit plan qwen3-4b-instruct-2507-awq --gpu 4090 --max-model-len 262144
	./build/vramfit fit qwen3-4b-instruct-2507-awq --gpu 4090
	./build/vramfit doctor tests/doctor/corpus/vllm-kv-max-seq-len-29000-llama3.1-8b-3090-10517.log \
	  --model llama-3.1-8b-instruct --gpu 3090

test: build
	@ctest --preset default -j2

asan: deps
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan
	@ctest --preset asan -j2

# clang's UBSan with -fsanitize=integer and float-cast-overflow over the whole test suite;
# a finding aborts the test (exit 3, see tools/sanitizer_options.cc).
ubsan:
	@bash tools/install-deps.sh fuzz
	@cmake --preset ubsan >/dev/null
	@cmake --build --preset ubsan
	@ctest --preset ubsan -j2

bench: deps
	@cmake --preset bench >/dev/null
	@cmake --build --preset bench
	./build-bench/vramfit_bench

fuzz:
	@bash tools/install-deps.sh fuzz
	@cmake --preset fuzz >/dev/null
	@cmake --build --preset fuzz
	@bash tools/run-fuzz.sh

clean:
	rm -rf build build-asan build-ubsan build-bench build-fuzz
