# Entry points for a fresh machine. `make demo` builds vramfit and inspects an embedded
# catalog model; `make test` builds and runs every test. Both install missing Debian
# build packages first (tools/install-deps.sh; needs root or sudo on a fresh machine).
.PHONY: all deps build demo test asan bench fuzz clean

all: build

deps:
	@bash tools/install-deps.sh

build: deps
	@cmake --preset default >/dev/null
	@cmake --build --preset default

demo: build
	./build/vramfit inspect qwen3-30b-a3b-gptq-int4
	./build/vramfit inspect qwen2.5-7b-instruct-awq --json | head -40

test: build
	@ctest --preset default -j2

asan: deps
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan
	@ctest --preset asan -j2

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
	rm -rf build build-asan build-bench build-fuzz
