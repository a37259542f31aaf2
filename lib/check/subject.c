/* lowp_subject -- releasing a subject of any kind (lib/check/subject.h) */

#include "check/subject.h"

#include <string.h>

void lowp_subject_close(lowp_subject_t *s) {
  if (!s) return;
  if (s->release) s->release(s);
  memset(s, 0, sizeof *s);
}
