/* A model's config.json (Hugging Face) read into analysis/kv.h's gq_kv_shape. */
#ifndef GQ_DOC_KV_CONFIG_H
#define GQ_DOC_KV_CONFIG_H

#include <jansson.h>
#include <stdbool.h>

#include "analysis/kv.h"
#include "core/status.h"

/* Read the KV shape from a Hugging Face config object. Fields:
 *   num_hidden_layers (required), num_attention_heads (required unless both
 *   num_key_value_heads and head_dim are present), num_key_value_heads
 *   (default: num_attention_heads), head_dim (default: hidden_size /
 *   num_attention_heads, which must divide evenly), torch_dtype (or "dtype",
 *   the newer name) as the default KV dtype.
 *   MLA: kv_lora_rank with qk_rope_head_dim (required then).
 *   Windows: sliding_window unless use_sliding_window is false; which layers
 *   use it comes from layer_types when listed, else from the architecture
 *   (model_type): mistral/mixtral every layer, gemma2 every other layer from
 *   layer 0, gemma3 all but every sliding_window_pattern-th (default 6),
 *   qwen2/qwen3 (and their _moe) the layers from max_window_layers on. Any
 *   other model_type with a window and no layer_types is refused.
 * Multimodal configs that keep the language model under "text_config" are
 * read from there. A null value counts as absent. `path` only labels messages.
 * *has_dtype tells whether a dtype was found (a config without torch_dtype is
 * fine when the caller has --kv-dtype); s->dtype is GQ_KV_DTYPE_NONE then.
 * Errors (GQ_E_USAGE) name the file and the missing or mistyped field. */
int gq_kv_config_parse(const json_t *root, const char *path, gq_kv_shape *s, bool *has_dtype, gq_err *err);

/* Load and parse a config.json file. A missing or unreadable file is GQ_E_IO;
 * malformed JSON is GQ_E_USAGE with the line and column. */
int gq_kv_config_load(const char *path, gq_kv_shape *s, bool *has_dtype, gq_err *err);

#endif
