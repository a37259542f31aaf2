/* lowp_output -- output files and folders: checked before the work, published atomically */
#ifndef LOWP_OUTPUT_H
#define LOWP_OUTPUT_H

/*
 * The rules (README "Outputs"), checked before any work, each refusal one
 * message and exit 2:
 *  - a FILE output (--out-exact, --state-out) must be absent or a regular
 *    file, not a symbolic link, folder, device, FIFO or socket, must not end
 *    in '/', and its folder must exist and be writable;
 *  - a FOLDER output (run/report --out) must be absent, an empty folder, or
 *    a folder lowp made: it holds the marker file .lowp-output, whose first
 *    line names lowp and whose other lines list every file lowp wrote there.
 *    A folder with anything not on that list (a user's notes.txt) is
 *    refused: lowp never deletes what it did not write. A symbolic link or
 *    a non-folder is refused. A trailing '/' is fine.
 * A folder is written as DIR.tmp.PID.N beside DIR and put in place at the
 * end: renamed if DIR is absent or empty, else swapped with the old lowp
 * folder in one step (renameat2 RENAME_EXCHANGE; two renames where the file
 * system lacks it), and the old one removed.
 */

/** @brief The marker file's name in every folder lowp writes. */
#define LOWP_OUTPUT_MARKER ".lowp-output"

/** @brief Check a file output now (see the rules above), or die with one
    message naming opt (e.g. "--out-exact") and exit 2. */
void lowp_output_check_file(const char *cmd, const char *opt, const char *path);

/** @brief Most parent folders one output may create. */
#define LOWP_OUTDIR_MAXPARENTS 32

/** @brief A folder output being written. */
typedef struct {
  char final[4096]; /**< destination, trailing slashes removed */
  char tmp[4200];   /**< the temporary folder to write into */
  int tmp_id;       /**< its registration (cleanup.h) */
  int parents[LOWP_OUTDIR_MAXPARENTS]; /**< registrations of the parents created */
  int nparents;
} lowp_outdir_t;

/**
 * @brief Check the destination folder path (or die: exit 2, one message),
 * create its missing parent folders (removed again if the run fails) and
 * the temporary folder (registered: removed on failure or signal).
 * @param[out] o   filled; write into o->tmp
 * @param[in] what the command, for the marker ("lowp run formats")
 */
void lowp_outdir_begin(lowp_outdir_t *o, const char *cmd, const char *opt, const char *path);

/**
 * @brief Write the marker into o->tmp (listing what is there), check the
 * destination again, and put the folder in place (see above); dies with
 * exit 2 (the temporary removed) if that fails.
 */
void lowp_outdir_publish(lowp_outdir_t *o, const char *cmd, const char *what);

/**
 * @brief In a finished lowp folder dir (not yet published: inside a report's
 * temporary folder), remove the plain files at its top whose names end in
 * suffix (".svg") and rewrite its marker so that it lists what is left
 * (what: the command named in the marker, "`lowp run NAME`"). 0, or -1 if a
 * file could not be removed or the marker not written.
 */
int lowp_outdir_drop_suffix(const char *dir, const char *suffix, const char *what);

/** @brief Remove the temporary folder (and the parents begin created). */
void lowp_outdir_abort(lowp_outdir_t *o);

/* ------------------------------------------------ outputs vs inputs */

/*
 * An output may not be an input or another output (issue 19: `check s.json
 * --json s.json` overwrote the spec). Files are the same when they have the
 * same device and inode; a file not there yet is named by its folder's
 * resolved path and its own name, so "r.out" and "./r.out" are one file.
 * Each refusal: one message naming both options, exit 2, before any work.
 */

/** @brief Most outputs one run has. */
#define LOWP_OUTPUTS_MAX 8

/** @brief The identity of a file. */
typedef struct {
  const char *opt;    /**< "--json", "baseline", ... (for messages) */
  const char *path;   /**< as given */
  int exists;         /**< 1: dev and ino hold */
  unsigned long long dev, ino;
  char resolved[4200]; /**< not there: its folder resolved, then its name */
} lowp_fileid_t;

/** @brief The outputs of a run, to compare with each other and the inputs. */
typedef struct {
  lowp_fileid_t out[LOWP_OUTPUTS_MAX];
  int n;
} lowp_outputs_t;

/** @brief Add an output (path NULL or "-": nothing); dies (exit 2) if it is
    an output already added. */
void lowp_outputs_add(lowp_outputs_t *s, const char *cmd, const char *opt, const char *path);

/** @brief Die (exit 2, one message) if the input path (NULL or "-":
    nothing; one that does not exist: nothing) is one of the outputs. */
void lowp_outputs_input(const lowp_outputs_t *s, const char *cmd, const char *what,
                        const char *path);

#endif
