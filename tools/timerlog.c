/*
 * timerlog: reads libtimerlog streams.
 *
 *   timerlog dump [--frame N | --frames A-B] [--thread NAME] [--root TITLE]
 *                 [--aggregate] [--min-percent P] FILE...
 *   timerlog export --chrome|--json|--csv [--thread NAME] [--root TITLE]
 *                   [-o OUT] FILE...
 *   timerlog info FILE...
 *   timerlog stats [--thread NAME] [--root TITLE] [--hitch MS]
 *                  [--hitch-quantile Q] [--max-hitches N] [--hitch-trees]
 *                  [--csv | --json | --hitches-csv] [--min-percent P]
 *                  [-o OUT] FILE...
 *   timerlog diff [--threshold P] [--alpha A] [--resamples N] [--seed N]
 *                 [--root TITLE] [--thread NAME] [--csv | --json] [-o OUT]
 *                 BASE NEW  |  BASE... --vs NEW...
 *   timerlog report [--base FILE]... [--thread NAME] [--root TITLE]
 *                   [--hitch MS] [--hitch-quantile Q] [--max-hitches N]
 *                   [--samples N] [-o OUT] FILE...
 *
 * A frame belongs to the thread that ran it, and its root row says what it
 * timed: --aggregate merges per thread name and root title, so that a side
 * thread's frames (a loader's "Load chunk") never fold into the main loop's
 * "Frame" tree, and --thread / --root pick such frames out.
 *
 * Exit status: 0 when every file read cleanly, 1 when a file could not be
 * read or is damaged (what came before the damage is still printed), when
 * nothing matched the selection, or when the output cannot be written; 2 for
 * a usage error. diff answers as diff(1) does, for CI jobs to gate on: 0 when
 * no row got slower, 1 when some row did, 2 for any trouble (usage, a file
 * unreadable or damaged, nothing to compare, the output).
 */
#include <stdio.h>

#include "cli.h"

int main(int argc, char **argv)
{
    return timerlog_main(argc, argv, stdout, stderr);
}
