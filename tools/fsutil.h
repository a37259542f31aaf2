/* lowp_fsutil -- folders for outputs: create, replace atomically, remove */
#ifndef LOWP_FSUTIL_H
#define LOWP_FSUTIL_H

/** @brief mkdir -p of the folder that contains path. 0 ok, -1 error. */
int lowp_mkdir_parent(const char *path);
/** @brief mkdir -p path. 0 ok, -1 error. */
int lowp_mkdir_p(const char *path);
/** @brief rm -rf path (no symlinks followed). 0 ok, -1 error. */
int lowp_rmtree(const char *path);
/** @brief Move folder tmp to final, replacing final if it exists (the old
    one is renamed aside first, then removed). 0 ok, -1 error. */
int lowp_replace_dir(const char *tmp, const char *final);

#endif
