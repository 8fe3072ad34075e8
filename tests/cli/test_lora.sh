#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/cli/test_lora.sh — fine-tuning a pretrained language model from the
# command line (tools/train-lm.c), on a tiny GGUF model the `gguf` package
# writes: `ember train --init MODEL.gguf --lora ...` lowers the validation
# loss, writes the adapters under PEFT's names with PEFT's
# adapter_config.json beside them, resumes bit for bit (10 steps, then 10
# more, end where 20 straight do, with dropout), `ember generate --adapter` runs them
# (and changes what the model writes), and runs them the same in PEFT's
# layout (no metadata: the scale from adapter_config.json, read as JSON;
# use_rslora refused, a broken config named), `ember export --adapter` merges
# them into a GGUF file that writes the same, a chat's conversations
# (--data chat) lower its validation loss and resume, --keep-activations
# and --recompute-all train as the default does, the token cache is
# read back and a damaged entry passed over, full fine-tuning (no
# --lora) lowers it, is read back by generate --weights and exported as a
# GGUF file that writes the same, and resumes, and mistakes are
# said: a malformed chat line, --data chat without a model or on two devices, --lora
# without a GGUF model, a bad --lora, data that is not text, adapters of
# another width.
#
#   test_lora.sh path/to/ember PYTHON
set -u
EMBER=$1 PY=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export EMBER_CACHE_DIR="$TMP/cache" # the token cache's, not the user's
. "$(dirname "$0")/../common/cli-util.sh"
if ! "$PY" -c "import gguf, numpy, safetensors" 2>/dev/null; then
    echo "skipped: no gguf, numpy or safetensors in $PY (scripts/setup.sh --tests)"
    exit 77
fi
HERE=$(cd "$(dirname "$0")" && pwd)
"$PY" - "$TMP" <<PYEOF || { echo "FAILED: the tiny models could not be written"; exit 1; }
import sys
sys.path.insert(0, "$HERE/../interop")
import numpy as np
import gguf
from test_lm_vs_torch import write_tiny, norms_to_one
rng = np.random.default_rng(0)
for name, arch, q in (("tiny", "llama", gguf.GGMLQuantizationType.Q8_0), ("other", "qwen2", gguf.GGMLQuantizationType.Q4_0)):
    path = f"{sys.argv[1]}/{name}.gguf"
    write_tiny(path, arch, q, rng, untied=True, biases=arch == "qwen2")
    norms_to_one(path)
PYEOF
# loss_fell BY WHAT: the last run's validation loss (in $TMP/err) fell by more than BY from before its first step
loss_fell() {
    before=$(sed -n 's/.*before fine-tuning: validation loss \([0-9.]*\).*/\1/p' "$TMP/err")
    after=$(sed -n 's/.*, validation loss \([0-9.]*\).*/\1/p' "$TMP/err" | tail -1)
    awk -v a="$before" -v b="$after" -v by="$1" 'BEGIN { exit !(a != "" && b != "" && b < a - by) }' ||
        fail "$2 validation loss did not fall by $1: $before to $after"
}
MODEL=$TMP/tiny.gguf
i=0
while [ $i -lt 40 ]; do
    echo "The quick brown fox jumps over the lazy dog. All that glitters is not gold." >>"$TMP/text.txt"
    i=$((i + 1))
done
common="--data text $TMP/text.txt --context 32 --batch 4 --optim adamw --lr 0.01 --device cpu --threads 1"

# 20 steps: the loss falls, the adapters and their config are PEFT's
run -- train --init "$MODEL" --lora r=4,alpha=8,targets=q,v,down $common --steps 20 --save "$TMP/a/adapter_model.safetensors" --metrics "$TMP/m.jsonl"
expect_status 3 "a --save into a folder that is not there"
mkdir -p "$TMP/a" "$TMP/b"
run -- train --init "$MODEL" --lora r=4,alpha=8,targets=q,v,down $common --steps 20 --save "$TMP/a/adapter_model.safetensors" --metrics "$TMP/m.jsonl"
expect_status 0 "train --init MODEL.gguf --lora"
expect_text "LoRA r=4 alpha=8 dropout=0 on q,v,down of 2 blocks" "the adapters said"
expect_text "before fine-tuning: validation loss" "the validation loss before said"
expect_text "validation loss" "the validation loss said"
[ -f "$TMP/a/adapter_config.json" ] || fail "no adapter_config.json beside the adapters"
"$PY" - "$TMP" <<'PYEOF' || fail "the adapters, their config or the metrics are not what PEFT and a plot expect"
import json, sys
from safetensors.numpy import load_file
tmp = sys.argv[1]
t = load_file(f"{tmp}/a/adapter_model.safetensors")
names = sorted(t)
assert len(names) == 2 * 2 * 3, names
assert "base_model.model.model.layers.1.mlp.down_proj.lora_B.weight" in t, names
assert t["base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight"].shape == (4, 256)
assert t["base_model.model.model.layers.0.self_attn.v_proj.lora_B.weight"].shape == (128, 4)
assert abs(t["base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight"]).max() > 0, "B did not train"
c = json.load(open(f"{tmp}/a/adapter_config.json"))
assert c["peft_type"] == "LORA" and c["r"] == 4 and c["lora_alpha"] == 8, c
assert c["target_modules"] == ["q_proj", "v_proj", "down_proj"], c
m = [json.loads(line) for line in open(f"{tmp}/m.jsonl")]
assert m[-1]["total_steps"] == 20 and m[-1]["test_loss"] < 5.0, m[-1]
PYEOF

# 10 steps, then 10 more from the checkpoint: the same adapters as 20 straight, dropout's masks and all
mkdir -p "$TMP/d"
run -- train --init "$MODEL" --lora r=4,alpha=8,dropout=0.1,targets=q,v,down $common --steps 20 --save "$TMP/d/run.safetensors"
expect_status 0 "20 steps with dropout"
run -- train --init "$MODEL" --lora r=4,alpha=8,dropout=0.1,targets=q,v,down $common --steps 10 --save "$TMP/b/run.safetensors"
expect_status 0 "the first 10 steps"
[ -f "$TMP/b/run.adapter_config.json" ] || fail "no run.adapter_config.json beside run.safetensors"
run -- train --resume "$TMP/b/run.safetensors" --steps 20 --device cpu
expect_status 0 "train --resume of a LoRA run"
expect_text "resuming" "the resume said"
"$PY" - "$TMP" <<'PYEOF' || fail "10 + 10 resumed steps do not end where 20 straight do"
import sys
import numpy as np
from safetensors.numpy import load_file
a = load_file(f"{sys.argv[1]}/d/run.safetensors")
b = load_file(f"{sys.argv[1]}/b/run.safetensors")
assert sorted(a) == sorted(b)
bad = [k for k in a if not np.array_equal(a[k], b[k])]
assert not bad, bad[:3]
PYEOF

# what the backward pass keeps: the projections' outputs (the default), everything, or each block's input alone;
# the same losses, to the digit, all three ways (with dropout, whose masks the second run must draw again)
for how in "" --keep-activations --recompute-all; do
    run -- train --init "$MODEL" --lora r=4,alpha=8,dropout=0.1 $common --steps 6 --log-every 1 $how
    expect_status 0 "6 steps ${how:-keeping the products}"
    grep -o "loss [0-9.]*" "$TMP/err" >"$TMP/losses${how}"
    [ -s "$TMP/losses" ] || fail "no losses said"
    cmp -s "$TMP/losses" "$TMP/losses${how}" || fail "$how trains otherwise: $(cat "$TMP/losses${how}")"
done
run -- train --init "$MODEL" --lora r=4 $common --steps 1 --keep-activations --recompute-all
expect_status 2 "--keep-activations with --recompute-all"
expect_text "give one of them" "--keep-activations with --recompute-all"

# the token cache: a text is tokenised once for a tokenizer, then read back; a damaged entry is tokenised
# afresh, the same losses either way; a FIFO where the entry goes is left alone
rm -rf "$TMP/cache"
run -- train --init "$MODEL" --lora r=4 $common --steps 2 --verbose
expect_text "cached 3040 tokens in $TMP/cache/tokens/" "the tokens cached"
grep -o "validation loss [0-9.]*" "$TMP/err" >"$TMP/losses"
run -- train --init "$MODEL" --lora r=4 $common --steps 2 --verbose
expect_text "the tokens of $TMP/text.txt from the cache" "the cached tokens read"
grep -o "validation loss [0-9.]*" "$TMP/err" | cmp -s - "$TMP/losses" || fail "the cached tokens train otherwise"
entry=$(ls "$TMP"/cache/tokens/*.tokens)
printf '\001' | dd of="$entry" bs=1 seek=70 conv=notrunc 2>/dev/null
run -- train --init "$MODEL" --lora r=4 $common --steps 2 --verbose
expect_text "does not fit: tokenising afresh" "a damaged cache entry passed over"
grep -o "validation loss [0-9.]*" "$TMP/err" | cmp -s - "$TMP/losses" || fail "a damaged cache entry changed the run"
if rm "$entry" && mkfifo "$entry" 2>/dev/null; then
    expect 0 "not caching tokens: .* is not a regular file" -- timeout 60 "$EMBER" train --init "$MODEL" --lora r=4 $common --steps 1 --verbose
    [ -p "$entry" ] || fail "the FIFO in the token cache was replaced"
fi

# a chat's conversations (ChatML: the tiny model has <|im_start|> and <|im_end|>), the loss on the replies alone
i=0
while [ $i -lt 30 ]; do
    printf '%s\n' '{"messages": [{"role": "user", "content": "Say it."}, {"role": "assistant", "content": "The quick brown fox jumps over the lazy dog."}]}' >>"$TMP/chat.jsonl"
    i=$((i + 1))
done
chat="--data chat $TMP/chat.jsonl --context 32 --batch 4 --optim adamw --lr 0.01 --device cpu --threads 1"
run -- train --init "$MODEL" --lora r=4,alpha=8 $chat --steps 12 --save "$TMP/c/run.safetensors"
expect_status 3 "a chat run's --save into a folder that is not there"
mkdir -p "$TMP/c"
run -- train --init "$MODEL" --lora r=4,alpha=8 $chat --steps 12 --save "$TMP/c/run.safetensors"
expect_status 0 "train --data chat"
expect_text "(30 conversations)" "the conversations counted"
loss_fell 0.5 "a chat's"
run -- train --resume "$TMP/c/run.safetensors" --steps 16 --device cpu
expect_status 0 "train --resume of a chat run"
expect_text "(30 conversations)" "the resumed run's conversations"
printf '{"messages": [{"role": "user", "content": "hi"}]}\n{"messages": [{"role": "user"}, 5]}\n' >"$TMP/bad.jsonl"
run -- train --init "$MODEL" --lora r=4 --data chat "$TMP/bad.jsonl" --steps 1 --device cpu
expect_status 3 "a malformed chat"
expect_text "bad.jsonl line 2: bad conversation at byte" "the malformed line named"
run -- train --data chat "$TMP/chat.jsonl" --steps 1
expect_status 2 "--data chat without a language model"
expect_text "give --init MODEL.gguf" "--data chat without --init MODEL.gguf"
run -- train --init "$MODEL" --lora r=4 $chat --device cpu,cpu --steps 1
expect_status 2 "a chat on two devices"
expect_text "on one device" "a chat on two devices"

# the adapters at work: generation changes, and the adapters of another model are refused
run -- generate --load "$MODEL" --prompt "The quick brown" --tokens 16 --temperature 0 --device cpu
expect_status 0 "generate without the adapters"
cp "$TMP/out" "$TMP/plain"
run -- generate --load "$MODEL" --adapter "$TMP/a/adapter_model.safetensors" --prompt "The quick brown" --tokens 16 --temperature 0 --device cpu --verbose
expect_status 0 "generate --adapter"
expect_text "LoRA r=4 alpha=8" "generate --verbose names the adapters"
cmp -s "$TMP/out" "$TMP/plain" && fail "the adapters changed nothing: $(cat "$TMP/out")"
cp "$TMP/out" "$TMP/adapted"
run -- generate --load "$TMP/other.gguf" --adapter "$TMP/a/adapter_model.safetensors" --prompt "The" --tokens 4 --device cpu
expect_status 0 "adapters of a model of the same shapes"
"$PY" - "$TMP" <<'PYEOF' || fail "the adapters of another width could not be written"
import sys
import numpy as np
from safetensors.numpy import load_file, save_file
t = load_file(f"{sys.argv[1]}/a/adapter_model.safetensors")
t = {k: (np.zeros((v.shape[0], 128), np.float32) if k.endswith("q_proj.lora_A.weight") else v) for k, v in t.items()}
save_file(t, f"{sys.argv[1]}/narrow.safetensors", metadata={"lora_alpha": "8"})
PYEOF
run -- generate --load "$MODEL" --adapter "$TMP/narrow.safetensors" --prompt "The" --tokens 4 --device cpu
expect_status 3 "adapters of another model's width"
expect_text "cannot load the adapters" "adapters of another width"
# PEFT's layout: no metadata in the safetensors, the scale from the adapter_config.json beside it,
# read as JSON (its keys in any order and spacing); use_rslora refused, a broken config named
PEFT_CONFIG='{"r":4,"target_modules":["q_proj","v_proj","down_proj"],"peft_type":"LORA","use_rslora":false,"lora_alpha":8}'
"$PY" - "$TMP" "$PEFT_CONFIG" <<'PYEOF' || fail "PEFT's layout of the adapters could not be written"
import os, sys
from safetensors.numpy import load_file, save_file
tmp, config = sys.argv[1], sys.argv[2]
for name, text in (("peft", config), ("rslora", config.replace('"use_rslora":false', '"use_rslora": true')),
                   ("broken", config[:-1])):
    os.makedirs(f"{tmp}/{name}")
    save_file(load_file(f"{tmp}/a/adapter_model.safetensors"), f"{tmp}/{name}/adapter_model.safetensors")
    open(f"{tmp}/{name}/adapter_config.json", "w").write(text)
PYEOF
run -- generate --load "$MODEL" --adapter "$TMP/peft/adapter_model.safetensors" --prompt "The quick brown" --tokens 16 --temperature 0 --device cpu
expect_status 0 "generate --adapter in PEFT's layout"
cmp -s "$TMP/out" "$TMP/adapted" || fail "PEFT's layout of the same adapters writes other text: $(cat "$TMP/out")"
run -- generate --load "$MODEL" --adapter "$TMP/rslora/adapter_model.safetensors" --prompt "The" --tokens 4 --device cpu
expect_status 4 "adapters trained with use_rslora"
expect_text "use_rslora" "use_rslora refused"
run -- generate --load "$MODEL" --adapter "$TMP/broken/adapter_model.safetensors" --prompt "The" --tokens 4 --device cpu
expect_status 3 "a broken adapter_config.json"
expect_text "adapter_config.json: bad JSON object at byte" "the broken config named with its byte"

# the adapters merged into a GGUF file: it runs as the model with the adapters does (greedy, the same text)
run -- export --load "$MODEL" --adapter "$TMP/a/adapter_model.safetensors" --type q8_0 --format gguf -o "$TMP/merged.gguf"
expect_status 0 "export --load MODEL.gguf --adapter"
expect_text "merged into its q8_0 projections" "the merge said"
run -- generate --load "$TMP/merged.gguf" --prompt "The quick brown" --tokens 16 --temperature 0 --device cpu
expect_status 0 "generate from the merged file"
cmp -s "$TMP/out" "$TMP/adapted" || fail "the merged file writes $(cat "$TMP/out"), the adapters $(cat "$TMP/adapted")"
run -- export --load "$MODEL" --adapter "$TMP/a/adapter_model.safetensors" --type q5_k -o "$TMP/merged.gguf"
expect_status 2 "export --type q5_k"
expect_text "F32, F16, Q8_0 or Q4_0" "an unknown --type"
run -- export --load "$MODEL" --adapter "$TMP/a/adapter_model.safetensors" -o "$MODEL"
[ "$status" -ne 0 ] || fail "export over its own input was taken"

# full fine-tuning (no --lora): every weight trained in F32, read back by generate --weights, exported as a
# GGUF file that writes the same, resumed
run -- train --init "$MODEL" $common --lr 0.001 --steps 20 --save "$TMP/full.safetensors"
expect_status 0 "train --init MODEL.gguf without --lora"
expect_text "every weight trained in F32" "the full fine-tuning said"
loss_fell 1 "the full fine-tuning's"
[ -f "$TMP/full.adapter_config.json" ] && fail "a full fine-tuning wrote an adapter_config.json"
run -- generate --load "$MODEL" --weights "$TMP/full.safetensors" --prompt "The quick brown" --tokens 16 --temperature 0 --device cpu
expect_status 0 "generate --weights"
cmp -s "$TMP/out" "$TMP/plain" && fail "the fine-tuned weights changed nothing: $(cat "$TMP/out")"
cp "$TMP/out" "$TMP/tuned"
run -- export --load "$MODEL" --weights "$TMP/full.safetensors" --type f32 -o "$TMP/tuned.gguf"
expect_status 0 "export --weights"
expect_text "every weight as fine-tuned" "the export of the weights said"
run -- generate --load "$TMP/tuned.gguf" --prompt "The quick brown" --tokens 16 --temperature 0 --device cpu
cmp -s "$TMP/out" "$TMP/tuned" || fail "the exported file writes $(cat "$TMP/out"), the weights $(cat "$TMP/tuned")"
run -- train --resume "$TMP/full.safetensors" --steps 24 --device cpu
expect_status 0 "train --resume of a full fine-tuning"
expect_text "every weight trained in F32" "the resumed full fine-tuning"
run -- generate --load "$MODEL" --weights "$TMP/a/adapter_model.safetensors" --prompt "The" --tokens 4 --device cpu
expect_status 3 "--weights given adapters"
run -- generate --load "$MODEL" --weights "$TMP/full.safetensors" --adapter "$TMP/a/adapter_model.safetensors" --prompt "The" --device cpu
expect_status 2 "--weights and --adapter together"

# mistakes, said before any work
run -- train --lora r=8 --data text --data-dir "$TMP/text.txt"
expect_status 2 "--lora without a language model"
expect_text "--lora adapts a pretrained language model" "--lora without --init MODEL.gguf"
run -- train --init "$MODEL" --lora r=0 $common --steps 1
expect_status 2 "--lora r=0"
expect_text "is not r (1 to 1024)" "--lora r=0"
run -- train --init "$MODEL" --lora r=1e20 $common --steps 1
expect_status 2 "--lora r=1e20"
run -- train --init "$MODEL" --lora targets=q,x $common --steps 1
[ "$status" -ne 0 ] || fail "--lora targets=q,x was taken"
expect_text "which is no projection" "an unknown target"
run -- train --init "$MODEL" --data random --steps 1 --device cpu
expect_status 2 "--init MODEL.gguf on data that is not text"
expect_text "give --data text FILE" "data that is not text"
if mkfifo "$TMP/fifo" 2>/dev/null; then # --init is looked at for GGUF's magic without waiting on a FIFO
    expect 3 "not a regular file" -- timeout 20 "$EMBER" train --init "$TMP/fifo" $common --steps 1
fi
finish test_lora
