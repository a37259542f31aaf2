/* lowp_spec -- the lowp check spec (JSON) parsed strictly into plain data */
#ifndef LOWP_SPEC_H
#define LOWP_SPEC_H

/*
 * The spec format is documented in docs/check-spec.schema.json (JSON Schema
 * 2020-12, kept in step with this parser) and the README ("lowp check").
 * Parsing is strict: unknown keys, wrong types, duplicate keys or check
 * names, unknown operations, formats, rules, metrics or distributions and
 * bad numbers are errors (LOWP_EPARSE) whose message names the entry:
 *   check 'x' (checks[3]): rule 2: unknown rule 'maxulp'
 * Subjects stay descriptions (kernel name and parameters, plugin path,
 * tensor files): tools/ resolves them, so lib/check does not depend on
 * kernels/. Paths are made relative to the spec file's folder (the current
 * folder for a spec read from stdin) unless absolute.
 * Every object may carry a "comment" key (a string), ignored.
 */

#include <stddef.h>
#include <stdint.h>

#include "check/op.h"
#include "check/pipeline.h"
#include "rng/dist.h"

/** @brief The spec format version this parser reads ("lowp_check": 1). */
#define LOWP_SPEC_VERSION 1

/** @brief A tensor file: path (resolved), tensor name in a .safetensors file
    (NULL for .npy), format of raw bit patterns (NULL: follow the dtype). */
typedef struct {
  char *path;
  char *tensor;
  char *format;
  /* a block-scaled input of saved tensors (docs/formats.md, "Scales from a
     companion tensor"): path holds the element values or packed codes */
  char *scales_path, *scales_tensor; /**< the companion scale tensor, or NULL */
  char *ts_path, *ts_tensor;         /**< the per-tensor scale as a tensor, or NULL */
  double tensor_scale;               /**< the per-tensor scale as a number; 0: none */
  int scale_layout;                  /**< lowp_bslayout_t of the scale tensor */
} lowp_spec_file_t;

/** @brief Subject kinds. */
typedef enum {
  LOWP_SPEC_KERNEL = 0,
  LOWP_SPEC_PLUGIN = 1,
  LOWP_SPEC_TENSORS = 2
} lowp_spec_subject_kind_t;

/** @brief A subject, as described in the spec. */
typedef struct {
  lowp_spec_subject_kind_t kind;
  char *kernel;       /**< KERNEL: registry name; PLUGIN: kernel name or NULL */
  char *params;       /**< KERNEL: "key=value,..." or NULL */
  char *plugin;       /**< PLUGIN: library path (resolved) */
  double timeout;     /**< PLUGIN: seconds per call, 0 = LOWP_PLUGIN_TIMEOUT's */
  lowp_spec_file_t *inputs, *outputs; /**< TENSORS */
  int n_inputs, n_outputs;
} lowp_spec_subject_t;

/** @brief One rule: the pipeline's rule plus what tools/ must resolve. */
typedef struct {
  lowp_rule_t rule;           /**< rule.other stays NULL */
  char *model;                /**< BOUND kind model: preset/parameters, or NULL
                                   (the subject's model) */
  int has_ref;                /**< VS_REF, BITEXACT: the other subject */
  lowp_spec_subject_t ref;
  char *baseline_metric;      /**< BASELINE: the metric's name */
  char *tree;                 /**< BOUND gamma: "order": "revealed" (this
                                   string) or {"tree": FILE} (the file), else
                                   NULL; "acc" is then the declared accumulator.
                                   twin: the twin's tree, the same way (NULL: a
                                   named order in rule.accum, has_accum) */
  int twin;                   /**< {"vs_twin": true, "order": ...} or
                                   {"bitexact": "twin", "order": ...}: kind
                                   BITEXACT against the twin of the revealed,
                                   given or declared tree (tools/ build it) */
} lowp_spec_rule_t;

/** @brief One check. */
typedef struct lowp_spec_check_s {
  char *name;
  int index;                  /**< position in "checks" */
  const lowp_op_t *op;
  lowp_spec_subject_t subject;
  int has_bin[LOWP_OP_MAXIO];    /**< input i in a block-scaled format (bin[i]; in[i] is fp32) */
  lowp_bsformat_t bin[LOWP_OP_MAXIO];
  int n_in_formats;           /**< 0: none given (tensors: follow the files);
                                   1: one for all inputs; else one per input */
  lowp_format_t in[LOWP_OP_MAXIO];
  /** "convert": {"B": "fp16" | {"format": F, "rnd": R}}: conversions inside
      the subject (lowp_problem_t.has_conv; rnd default rne); or "revealed"
      (conv_revealed: tools/ reveal the subject and take the conversions
      found, check/reveal.h) */
  int has_conv[LOWP_OP_MAXIO];
  lowp_format_t conv[LOWP_OP_MAXIO];
  lowp_rounding_t conv_rnd[LOWP_OP_MAXIO];
  int conv_revealed;
  int has_out;
  lowp_format_t out;
  int has_shape;              /**< 1: "shape" given (dims, missing ones 1) */
  lowp_dims_t dims;
  int generated;              /**< 1: inputs from dist + seed */
  lowp_dist_t dist;
  char *dist_text;
  uint64_t seed;
  lowp_spec_file_t *files;    /**< inputs from files (n_files = n_in) */
  lowp_spec_file_t *data;     /**< unrounded originals, or NULL */
  int n_files, n_data;
  double eps;                 /**< layernorm/rmsnorm; default 1e-5 */
  int reduction_mean;         /**< xent */
  lowp_spec_rule_t *rules;
  int n_rules;
  char fingerprint[17];       /**< 16 hex digits: FNV-1a 64 of the canonical
                                   JSON of the check without "rules", with the
                                   defaults applied */
} lowp_spec_check_t;

/** @brief A parsed spec. */
typedef struct {
  int version;
  char *dir;                  /**< folder paths are relative to */
  char *baseline;             /**< resolved path, or NULL */
  lowp_spec_check_t *checks;
  int n_checks;
  int *by_name;               /**< private: hash index of the names (lowp_spec_find) */
  size_t by_name_cap;         /**< its slots (a power of 2, or 0) */
  unsigned long long name_probes; /**< name comparisons the index made while
                                   parsing: linear in n_checks (tests hold it) */
} lowp_spec_t;

/**
 * @brief Parse spec text (len bytes) whose relative paths start at dir.
 * @param[out] s   filled on success (free with lowp_spec_free either way)
 * @param[out] err one line naming the entry and the problem
 * @return LOWP_OK; LOWP_EPARSE; LOWP_ENOMEM.
 */
int lowp_spec_parse(lowp_spec_t *s, const char *text, size_t len, const char *dir,
                    char *err, size_t errlen);

/**
 * @brief Read and parse a spec file ("-" reads stdin; paths then relative
 * to the current folder).
 * @return as lowp_spec_parse; LOWP_EIO (cannot read: err says so).
 */
int lowp_spec_read(lowp_spec_t *s, const char *path, char *err, size_t errlen);

/**
 * @brief Read a spec's bytes ("-": stdin), at most 64 MiB, into *text
 * (NUL-terminated, *len bytes; free it). lowp_spec_read is this and
 * lowp_spec_parse_path; apart, an MPI job compares what each rank read
 * before parsing it (par/par.h).
 * @return LOWP_OK; LOWP_EIO (err says why); LOWP_ENOMEM; LOWP_EINVAL.
 */
int lowp_spec_slurp(char **text, size_t *len, const char *path, char *err, size_t errlen);

/** @brief lowp_spec_parse of text read from path: relative paths start at
    path's folder (the current one for "-"). */
int lowp_spec_parse_path(lowp_spec_t *s, const char *text, size_t len, const char *path, char *err,
                         size_t errlen);

/** @brief Free a spec (safe on a zeroed struct). */
void lowp_spec_free(lowp_spec_t *s);

/** @brief The check called name, or NULL. */
const lowp_spec_check_t *lowp_spec_find(const lowp_spec_t *s, const char *name);

/**
 * @brief Parse a JSON array of rules alone (the spec's "rules" syntax), for
 * callers that hold the outputs themselves (the Python binding): a
 * "vs_reference" or "bitexact" of "outputs" means arrays the caller gives
 * (its subject description reads kernel "outputs"). out: the check's output
 * format (a bound rule's default "acc"), or NULL.
 * @param[out] rules  *n_rules parsed rules (free with lowp_spec_rules_free,
 *                    also on failure)
 * @return LOWP_OK; LOWP_EPARSE (err: "rules: rule 2: ..."); LOWP_ENOMEM.
 */
int lowp_spec_rules_parse(lowp_spec_rule_t **rules, int *n_rules, const char *json,
                          const lowp_format_t *out, char *err, size_t errlen);

/**
 * @brief Parse the description of a check on arrays the caller holds (the
 * Python binding; lib/check/capi.h) with the spec's own parts, so that it
 * refuses exactly what a spec refuses: "op", "in", "out", "eps",
 * "reduction" and "rules" as a spec check's ("rules", when present or
 * need_rules, a non-empty array; "vs_reference"/"bitexact": "outputs" names
 * the caller's arrays), "dims" as a check's "shape", "name" as a check's
 * name. Any other key must be in extra (NULL-terminated; the caller reads
 * it); unknown keys are errors.
 * @param[out] ck  filled (free with lowp_spec_check_free, also on failure);
 *                 "in" absent: n_in_formats 0
 * @return LOWP_OK; LOWP_EPARSE (err: one line); LOWP_ENOMEM.
 */
struct cJSON;
int lowp_spec_desc_parse(lowp_spec_check_t *ck, const struct cJSON *j, const char *const *extra,
                         int need_rules, char *err, size_t errlen);

/** @brief Check a name as a spec checks a check's name (a string, no
    control character, JUnit XML can hold it); what names it in err. */
int lowp_spec_name_check(const struct cJSON *j, const char *what, char *err, size_t errlen);

/** @brief Free a check of lowp_spec_desc_parse (safe on a zeroed struct). */
void lowp_spec_check_free(lowp_spec_check_t *ck);

/** @brief Free rules of lowp_spec_rules_parse. */
void lowp_spec_rules_free(lowp_spec_rule_t *rules, int n_rules);

/**
 * @brief Parse JSON text strictly: valid UTF-8 (RFC 8259), no NUL byte
 * (raw, or \u0000, which no C string holds), nothing but white space after
 * the value. What a spec and a baseline are read with.
 * @param[out] root the value (cJSON_Delete it), NULL on failure
 * @param[out] err  one line: what is wrong and where (line, byte)
 * @return LOWP_OK; LOWP_EPARSE; LOWP_ENOMEM.
 */
struct cJSON;
int lowp_spec_json(struct cJSON **root, const char *text, size_t len, char *err, size_t errlen);

/** @brief FNV-1a 64 of len bytes, as 16 hex digits (+ NUL) in out. */
void lowp_spec_hash(char out[17], const void *data, size_t len);

#endif
