/*
 * Statistics across frames, written out: the text tree of each group with
 * its hitches, one hitch's frame against the medians, JSON and CSV.
 * Everything a writer needs is allocated before its first byte, so that a
 * failure writes nothing.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "alloc.h"
#include "frame.h"
#include "summary.h"
#include "text.h"
#include "tree.h"

#define NONE TLOG_ROW_NONE
#define CULPRITS 5

/* What a writer needs: a frame's rows in the summary and a path. */
typedef struct scratch {
    uint32_t *map;            /* rows of a hitch frame's nodes */
    const void **chain;       /* a path, leaf first */
} scratch;

static const tlog_hitch *hitch_at(const tlog_summary *s, size_t k)
{
    return &s->hitches[(s->hitch_first + k) % s->cfg.max_hitches];
}

static int scratch_make(const tlog_summary *s, scratch *sc)
{
    size_t nodes = 1, depth = 1;
    for (size_t k = 0; k < s->nhitches; k++) {
        const tlog_frame *f = hitch_at(s, k)->frame;
        if (f->nnodes > nodes)
            nodes = f->nnodes;
        for (size_t i = 0; i < f->nnodes; i++)
            if ((size_t)f->nodes[i].depth + 1 > depth)
                depth = (size_t)f->nodes[i].depth + 1;
    }
    for (size_t r = 0; r < s->nrows; r++)
        if ((size_t)s->rows[r].depth + 1 > depth)
            depth = (size_t)s->rows[r].depth + 1;
    sc->map = tlog_malloc_(nodes * sizeof *sc->map);
    sc->chain = tlog_malloc_(depth * sizeof *sc->chain);
    if (sc->map && sc->chain)
        return TLOG_OK;
    free(sc->map);
    free(sc->chain);
    return TLOG_ENOMEM;
}

/* What every export does first: checks the summary, writes to stdout when
 * `out` is NULL, and makes the scratch (TLOG_EINVAL, TLOG_ENOMEM). */
static int export_begin(const tlog_summary *s, FILE **out, scratch *sc)
{
    if (!s)
        return TLOG_EINVAL;
    tlog_summary_settle_(s);
    if (!*out)
        *out = stdout;
    return scratch_make(s, sc);
}

static void scratch_free(scratch *sc)
{
    free(sc->map);
    free(sc->chain);
}

static double mean_of(const tlog_stat_row *r, tlog_stat_of of)
{
    uint64_t frames = tlog_row_hot_(r)->frames;
    return frames ? (double)tlog_row_acc_(r, of).sum / (double)frames : 0.0;
}

static uint64_t median_of(const tlog_stat_row *r, tlog_stat_of of)
{
    const tlog_acc a = tlog_row_acc_(r, of);
    return tlog_sketch_quantile_(&a, tlog_row_hot_(r)->frames, 0.5);
}

/* The figures of one quantity of a row. */
static void value_of(const tlog_stat_row *r, tlog_stat_of of, tlog_stat_value *v)
{
    const tlog_acc a = tlog_row_acc_(r, of);
    tlog_stat_value_(&a, tlog_row_hot_(r)->frames, v);
}

/* ------------------------------------------------------------------------ */
/* The rows that made a hitch slow                                          */
/* ------------------------------------------------------------------------ */

size_t tlog_hitch_culprits_(const tlog_summary *s, const tlog_hitch *h, const uint32_t *map,
                            size_t max, uint32_t *nodes, uint64_t *excess)
{
    const tlog_frame *f = h->frame;
    size_t n = 0;
    /* A row counts when it explains at least a twentieth of how much longer
     * than the median frame this one was: jitter in every row does not. */
    if (h->duration_ns <= h->median_ns)
        return 0;
    uint64_t least = (h->duration_ns - h->median_ns) / 20 + 1;
    for (size_t i = 0; i < f->nnodes; i++) {
        if (map[i] == NONE)
            continue;
        uint64_t median = median_of(&s->rows[map[i]], TLOG_STAT_SELF);
        uint64_t self = f->nodes[i].self_ns;
        if (self < median + least || self < median)
            continue;
        uint64_t e = self - median;
        size_t at = n < max ? n++ : max;
        while (at > 0 && excess[at - 1] < e) {   /* sorted, largest first */
            if (at < max) {
                excess[at] = excess[at - 1];
                nodes[at] = nodes[at - 1];
            }
            at--;
        }
        if (at < max) {
            excess[at] = e;
            nodes[at] = (uint32_t)i;
        }
    }
    return n;
}

/* ------------------------------------------------------------------------ */
/* Text                                                                     */
/* ------------------------------------------------------------------------ */

/* Percentages past this are printed as `>9999.99%`, as in frame dumps. */
#define PERCENT_SHOWN_MAX 9999.99

static void put_percent(FILE *out, double mean, double parent_mean, bool root)
{
    double pct = root ? 100.0 : parent_mean > 0 ? 100.0 * mean / parent_mean : 0.0;
    if (pct > PERCENT_SHOWN_MAX || (!root && parent_mean <= 0 && mean > 0)) {
        fputs(">9999.99% ", out);
        return;
    }
    tlog_put_fixed_(out, pct, 2);
    fputs("% ", out);
}

/* "p99", "p99.9", "p99.99": as many decimals as the quantile has (at
 * most four), so that none rounds to a whole percentile it is not. */
static void put_quantile_label(FILE *out, double q)
{
    double pct = q * 100.0;
    fputc('p', out);
    if (pct == (double)(uint64_t)pct) {
        fprintf(out, "%llu", (unsigned long long)pct);
        return;
    }
    int decimals = 1;
    for (double scale = 10; decimals < 4; decimals++, scale *= 10) {
        double near = (double)(uint64_t)(pct * scale + 0.5) / scale;
        if (near - pct < 1e-7 && pct - near < 1e-7)
            break;
    }
    tlog_put_fixed_(out, pct, decimals);
}

/* `thread "NAME", root "TITLE"` of a group, as the heads of groups and
 * hitches name it. */
static void put_group_names(FILE *out, const tlog_summary *s, const tlog_group *g)
{
    fputs("thread \"", out);
    tlog_put_line_text_(out, g->thread_name);
    fputs("\", root \"", out);
    tlog_put_line_text_(out, s->hot[g->root].name);
    fputc('"', out);
}

static void put_hitch_head(FILE *out, const tlog_summary *s, const tlog_hitch *h)
{
    fprintf(out, "# hitch %llu: ", (unsigned long long)h->number);
    put_group_names(out, s, &s->groups[h->group]);
    fprintf(out, ", frame %llu", (unsigned long long)h->frame->serial);
    if (h->frame->rank)
        fprintf(out, " (rank %u)", h->frame->rank);
    fputs(": ", out);
    tlog_put_seconds_(out, h->duration_ns);
    fputs(", over ", out);
    if (h->reasons & TLOG_HITCH_BUDGET) {
        fputs("the budget ", out);
        tlog_put_seconds_(out, h->budget_ns);
    }
    if ((h->reasons & TLOG_HITCH_BUDGET) && (h->reasons & TLOG_HITCH_QUANTILE))
        fputs(" and ", out);
    if (h->reasons & TLOG_HITCH_QUANTILE) {
        fputs("the ", out);
        put_quantile_label(out, s->cfg.hitch_quantile);
        fputs(" of recent frames ", out);
        tlog_put_seconds_(out, h->quantile_ns);
    }
    fputs("; median frame ", out);
    tlog_put_seconds_(out, h->median_ns);
}

/* After `lead`: the rows that made the hitch slow. */
static void put_culprits(FILE *out, const tlog_summary *s, const tlog_hitch *h, uint32_t *map,
                         const char *lead)
{
    uint32_t nodes[CULPRITS];
    uint64_t excess[CULPRITS];
    tlog_summary_map_frame_(s, h->frame, map);
    size_t n = tlog_hitch_culprits_(s, h, map, CULPRITS, nodes, excess);
    fputs(lead, out);
    fputs(n ? "slower than their median self time: " : "no row stands out against its median",
          out);
    for (size_t k = 0; k < n; k++) {
        const tlog_node *node = &h->frame->nodes[nodes[k]];
        fputs(k ? ", " : "", out);
        if (node->kind == TLOG_KIND_EXECUTION)
            fputs("(E) ", out);
        tlog_put_line_text_(out, node->name);
        fputs(" +", out);
        tlog_put_seconds_(out, excess[k]);
    }
}

static void print_stat_row(FILE *out, const tlog_summary *s, const tlog_stat_row *r,
                           unsigned columns)
{
    const tlog_row_hot *h = tlog_row_hot_(r);
    const tlog_stat_row *p = tlog_stat_row_at_(s, h->parent);
    double mean = mean_of(r, TLOG_STAT_TOTAL);
    tlog_dump_prefix_(out, r->depth, h->kind);
    put_percent(out, mean, p ? mean_of(p, TLOG_STAT_TOTAL) : 0, !p);
    tlog_put_seconds_(out, tlog_ns_from_double_(mean + 0.5));
    tlog_put_stat_columns_(out, r, columns & ~(unsigned)TLOG_COLUMN_DELTA, 0);
    const tlog_row_ranks *k = tlog_row_ranks_(s, r);
    if (k) {   /* a reduction: the ranks' medians and the slowest rank */
        fputs(" | median of ranks ", out);
        tlog_put_seconds_(out, tlog_ns_from_double_(k->median_sum / k->present + 0.5));
        fputs(" | slowest p99 ", out);
        tlog_put_seconds_(out, k->p99_max);
        fprintf(out, " (rank %u)", k->p99_max_rank);
    }
    fprintf(out, " | (%c) ", h->kind == TLOG_KIND_EXECUTION ? 'E' : 'C');
    tlog_put_line_text_(out, h->name);
    uint64_t count = median_of(r, TLOG_STAT_COUNT);
    if (count > 1)
        fprintf(out, " [x%llu]", (unsigned long long)count);
    uint64_t group_frames = tlog_row_group_frames_(r);
    if (h->frames < group_frames && !(columns & TLOG_COLUMN_FRAMES))
        fprintf(out, " [in %llu/%llu frames]", (unsigned long long)h->frames,
                (unsigned long long)group_frames);
    if (k && k->present < s->reduced)
        fprintf(out, " [on %u/%u ranks]", k->present, s->reduced);
    if (h->flags & TLOG_NODE_UNRESOLVED)
        fputs(" [unresolved]", out);
    fputc('\n', out);
}

static bool hidden_row(const tlog_summary *s, const tlog_stat_row *r,
                       const tlog_dump_options *o)
{
    const tlog_stat_row *p = tlog_stat_row_at_(s, tlog_row_hot_(r)->parent);
    if (!p)
        return false;
    double mean = mean_of(r, TLOG_STAT_TOTAL), pm = mean_of(p, TLOG_STAT_TOTAL);
    return mean < (double)o->min_ns || (pm > 0 ? 100.0 * mean / pm : 0.0) < o->min_percent;
}

static uint32_t next_row(const tlog_summary *s, uint32_t r, bool into)
{
    if (into && s->rows[r].first_child != NONE)
        return s->rows[r].first_child;
    while (r != NONE && s->rows[r].next_sibling == NONE)
        r = s->hot[r].parent;
    return r == NONE ? NONE : s->rows[r].next_sibling;
}

static size_t subtree_rows(const tlog_summary *s, uint32_t top)
{
    size_t n = 1;
    uint32_t r = s->rows[top].first_child;
    while (r != NONE) {
        n++;
        if (s->rows[r].first_child != NONE) {
            r = s->rows[r].first_child;
            continue;
        }
        while (r != top && s->rows[r].next_sibling == NONE)
            r = s->hot[r].parent;
        r = r == top ? NONE : s->rows[r].next_sibling;
    }
    return n;
}

static void print_group(FILE *out, const tlog_summary *s, const tlog_group *g,
                        const tlog_dump_options *o)
{
    const tlog_row_hot *root = &s->hot[g->root];
    fputs("# ", out);
    put_group_names(out, s, g);
    fprintf(out, ": %llu frames; time: mean per frame, quantiles within 0.79%%\n",
            (unsigned long long)root->frames);
    unsigned columns = o->columns ? o->columns : TLOG_COLUMNS_SUMMARY;
    size_t hidden = 0;
    for (uint32_t r = g->root; r != NONE;) {
        bool hide = hidden_row(s, &s->rows[r], o);
        if (hide)
            hidden += subtree_rows(s, r);
        else
            print_stat_row(out, s, &s->rows[r], columns);
        r = next_row(s, r, !hide);
    }
    if (hidden) {
        fprintf(out, "# %zu rows hidden (mean shorter than ", hidden);
        tlog_put_fixed_(out, (double)o->min_ns / 1e9, 6);
        fputs("s or below ", out);
        tlog_put_fixed_(out, o->min_percent, 2);
        fputs("% of parent)\n", out);
    }
}

int tlog_summary_dump(const tlog_summary *s, FILE *out, const tlog_dump_options *options)
{
    tlog_dump_options o;
    if (!tlog_dump_options_of_(options, &o))
        return TLOG_EINVAL;
    scratch sc;
    int rc = export_begin(s, &out, &sc);
    if (rc != TLOG_OK)
        return rc;
    for (size_t g = 0; g < s->ngroups; g++) {
        if (g)
            fputc('\n', out);
        print_group(out, s, &s->groups[g], &o);
    }
    if (!s->ngroups)
        fputs("# no frames\n", out);
    if (s->reduced)
        fprintf(out, "# reduced over %u ranks: times over the frames of all; beside them, "
                     "the mean of the ranks' medians and the slowest rank's p99\n",
                s->reduced);
    if (s->rows_refused)
        fprintf(out, "# %llu rows left out (max_rows %u)\n",
                (unsigned long long)s->rows_refused, s->cfg.max_rows);
    if (s->hitches_seen)
        fprintf(out, "# hitches: %llu seen, the last %zu kept\n",
                (unsigned long long)s->hitches_seen, s->nhitches);
    for (size_t k = 0; k < s->nhitches; k++) {
        put_hitch_head(out, s, hitch_at(s, k));
        put_culprits(out, s, hitch_at(s, k), sc.map, "; ");
        fputc('\n', out);
    }
    scratch_free(&sc);
    return tlog_written_(out);
}

typedef struct hitch_head {
    const tlog_summary *s;
    const tlog_hitch *h;
} hitch_head;

static void put_hitch_line(FILE *out, const void *arg)
{
    const hitch_head *hh = arg;
    put_hitch_head(out, hh->s, hh->h);
    fputc('\n', out);
}

int tlog_summary_dump_hitch(const tlog_summary *s, size_t index, FILE *out,
                            const tlog_dump_options *options)
{
    tlog_dump_options o;
    if (!s || index >= s->nhitches || !tlog_dump_options_of_(options, &o))
        return TLOG_EINVAL;
    tlog_summary_settle_(s);
    if (!out)
        out = stdout;
    const tlog_hitch *h = hitch_at(s, index);
    uint32_t *map = tlog_malloc_(h->frame->nnodes * sizeof *map);
    if (!map)
        return TLOG_ENOMEM;
    o.summary = s;
    if (!o.columns)
        o.columns = TLOG_COLUMN_MEDIAN | TLOG_COLUMN_DELTA;
    hitch_head hh = {s, h};
    int rc = tlog_dump_frame_headed_(h->frame, out, &o, put_hitch_line, &hh);
    if (rc == TLOG_OK) {
        put_culprits(out, s, h, map, "# ");
        fputc('\n', out);
        rc = tlog_written_(out);
    }
    free(map);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* JSON                                                                     */
/* ------------------------------------------------------------------------ */

static void json_value(FILE *out, const char *name, const tlog_stat_row *r, tlog_stat_of of)
{
    tlog_stat_value v;
    value_of(r, of, &v);
    fprintf(out, ",\"%s\":{\"mean\":", name);
    tlog_put_fixed_(out, v.mean, 3);
    fprintf(out, ",\"min\":%" PRIu64 ",\"median\":%" PRIu64 ",\"p90\":%" PRIu64
                 ",\"p99\":%" PRIu64 ",\"max\":%" PRIu64 "}",
            v.min, v.median, v.p90, v.p99, v.max);
}

static void json_flags(FILE *out, unsigned flags)
{
    static const char *const names[] = {"repaired", "device", "unresolved", "forced_sync",
                                        "past_frame"};
    fputc('[', out);
    bool first = true;
    for (unsigned b = 0; b < sizeof names / sizeof names[0]; b++)
        if (flags & (1u << b)) {
            fprintf(out, "%s\"%s\"", first ? "" : ",", names[b]);
            first = false;
        }
    fputc(']', out);
}

static void json_row_fields(FILE *out, const tlog_stat_row *r)
{
    const tlog_row_hot *h = tlog_row_hot_(r);
    fputs("{\"name\":", out);
    tlog_json_str_(out, h->name);
    fprintf(out, ",\"kind\":\"%s\",\"depth\":%d,\"device\":",
            h->kind == TLOG_KIND_EXECUTION ? "execution" : "control", r->depth);
    if (r->device)
        tlog_json_str_(out, r->device);
    else
        fputs("null", out);
    fprintf(out, ",\"site_id\":\"0x%016" PRIx64 "\",\"flags\":", r->site_id);
    json_flags(out, h->flags);
    fprintf(out, ",\"frames\":%" PRIu64, h->frames);
    json_value(out, "total_ns", r, TLOG_STAT_TOTAL);
    json_value(out, "self_ns", r, TLOG_STAT_SELF);
    json_value(out, "count", r, TLOG_STAT_COUNT);
    const tlog_row_ranks *k = tlog_row_ranks_(r->owner, r);
    if (k) {
        fprintf(out, ",\"ranks\":{\"present\":%u,\"median_mean_ns\":", k->present);
        tlog_put_fixed_(out, k->median_sum / k->present, 1);
        fprintf(out, ",\"p99_max_ns\":%" PRIu64 ",\"p99_max_rank\":%u}", k->p99_max,
                k->p99_max_rank);
    }
    fputs(",\"children\":[", out);
}

static void json_group(FILE *out, const tlog_summary *s, const tlog_group *g)
{
    fputs("{\"thread\":", out);
    tlog_json_str_(out, g->thread_name);
    fputs(",\"root\":", out);
    tlog_json_str_(out, s->hot[g->root].name);
    fprintf(out, ",\"frames\":%" PRIu64 ",\"tree\":", s->hot[g->root].frames);
    /* Iterative: open a row, and close as many as the walk climbs. */
    for (uint32_t r = g->root; r != NONE;) {
        json_row_fields(out, &s->rows[r]);
        if (s->rows[r].first_child != NONE) {
            r = s->rows[r].first_child;
            continue;
        }
        fputs("]}", out);
        while (r != NONE && s->rows[r].next_sibling == NONE) {
            r = s->hot[r].parent;
            if (r != NONE)
                fputs("]}", out);
        }
        if (r != NONE) {
            r = s->rows[r].next_sibling;
            fputc(',', out);
        }
    }
    fputc('}', out);
}

/* A frame node's path in a CSV field: titles from the root, joined by
 * " / ", (E) titles led by "(E) ", quotes doubled when `quote`. */
static void put_node_path(FILE *out, const tlog_node *n, const void **chain, bool quote)
{
    size_t k = 0;
    for (; n; n = n->parent)
        chain[k++] = n;
    for (size_t i = k; i-- > 0;) {
        if (i + 1 != k)
            fputs(" / ", out);
        const tlog_node *a = chain[i];
        tlog_put_path_title_(out, a->name, a->kind, quote);
    }
}

static void json_hitch(FILE *out, const tlog_summary *s, const tlog_hitch *h, scratch *sc)
{
    const tlog_group *g = &s->groups[h->group];
    fprintf(out, "{\"number\":%" PRIu64 ",\"thread\":", h->number);
    tlog_json_str_(out, g->thread_name);
    fputs(",\"root\":", out);
    tlog_json_str_(out, s->hot[g->root].name);
    fprintf(out, ",\"rank\":%u,\"frame\":%" PRIu64 ",\"duration_ns\":%" PRIu64
                 ",\"reasons\":[%s%s%s],\"budget_ns\":%" PRIu64 ",\"quantile_ns\":%" PRIu64
                 ",\"median_ns\":%" PRIu64 ",\"slower\":[",
            h->frame->rank, h->frame->serial, h->duration_ns,
            h->reasons & TLOG_HITCH_BUDGET ? "\"budget\"" : "",
            h->reasons == (TLOG_HITCH_BUDGET | TLOG_HITCH_QUANTILE) ? "," : "",
            h->reasons & TLOG_HITCH_QUANTILE ? "\"quantile\"" : "", h->budget_ns,
            h->quantile_ns, h->median_ns);
    uint32_t nodes[CULPRITS];
    uint64_t excess[CULPRITS];
    tlog_summary_map_frame_(s, h->frame, sc->map);
    size_t n = tlog_hitch_culprits_(s, h, sc->map, CULPRITS, nodes, excess);
    for (size_t k = 0; k < n; k++) {
        const tlog_node *node = &h->frame->nodes[nodes[k]];
        fputs(k ? ",{\"name\":" : "{\"name\":", out);
        tlog_json_str_(out, node->name);
        fprintf(out, ",\"kind\":\"%s\",\"depth\":%d,\"self_ns\":%" PRIu64
                     ",\"median_self_ns\":%" PRIu64 ",\"excess_ns\":%" PRIu64 "}",
                node->kind == TLOG_KIND_EXECUTION ? "execution" : "control", node->depth,
                node->self_ns,
                median_of(&s->rows[sc->map[nodes[k]]], TLOG_STAT_SELF), excess[k]);
    }
    fputs("]}", out);
}

int tlog_summary_export_json(const tlog_summary *s, FILE *out)
{
    scratch sc;
    int rc = export_begin(s, &out, &sc);
    if (rc != TLOG_OK)
        return rc;
    fprintf(out, "{\"relative_error\":");
    tlog_put_fixed_(out, TLOG_STATS_RELATIVE_ERROR, 8);
    fprintf(out, ",\"frames\":%" PRIu64 ",\"rows_refused\":%" PRIu64
                 ",\"hitches_seen\":%" PRIu64 ",\"reduced_ranks\":%u,\"groups\":[",
            s->frames, s->rows_refused, s->hitches_seen, s->reduced);
    for (size_t g = 0; g < s->ngroups; g++) {
        fputs(g ? ",\n" : "\n", out);
        json_group(out, s, &s->groups[g]);
    }
    fputs("\n],\"hitches\":[", out);
    for (size_t k = 0; k < s->nhitches; k++) {
        fputs(k ? ",\n" : "\n", out);
        json_hitch(out, s, hitch_at(s, k), &sc);
    }
    fputs("\n]}\n", out);
    scratch_free(&sc);
    return tlog_written_(out);
}

/* ------------------------------------------------------------------------ */
/* CSV                                                                      */
/* ------------------------------------------------------------------------ */

static void csv_row_path(FILE *out, const tlog_summary *s, uint32_t r, const void **chain)
{
    size_t k = 0;
    bool quote = false;
    for (; r != NONE; r = s->hot[r].parent) {
        quote |= strpbrk(s->hot[r].name, ",\"\n\r") != NULL;
        chain[k++] = &s->hot[r];
    }
    if (quote)
        fputc('"', out);
    for (size_t i = k; i-- > 0;) {
        if (i + 1 != k)
            fputs(" / ", out);
        const tlog_row_hot *a = chain[i];
        tlog_put_path_title_(out, a->name, a->kind, quote);
    }
    if (quote)
        fputc('"', out);
}

static void csv_value(FILE *out, const tlog_stat_row *r, tlog_stat_of of)
{
    tlog_stat_value v;
    value_of(r, of, &v);
    fputc(',', out);
    tlog_put_fixed_(out, v.mean, 3);
    fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, v.min, v.median,
            v.p90, v.p99, v.max);
}

int tlog_summary_export_csv(const tlog_summary *s, FILE *out)
{
    scratch sc;
    int rc = export_begin(s, &out, &sc);
    if (rc != TLOG_OK)
        return rc;
    fputs("thread,root,path,kind,device,frames", out);
    static const char *const of[] = {"total", "self", "count"};
    for (int q = 0; q < 3; q++)
        fprintf(out, ",%s_mean,%s_min,%s_median,%s_p90,%s_p99,%s_max", of[q], of[q], of[q],
                of[q], of[q], of[q]);
    if (s->reduced)
        fputs(",ranks,rank_median_mean,rank_p99_max,rank_p99_max_rank", out);
    fputc('\n', out);
    for (size_t g = 0; g < s->ngroups; g++) {
        const tlog_group *grp = &s->groups[g];
        for (uint32_t r = grp->root; r != NONE; r = next_row(s, r, true)) {
            const tlog_stat_row *x = &s->rows[r];
            tlog_csv_field_(out, grp->thread_name);
            fputc(',', out);
            tlog_csv_field_(out, s->hot[grp->root].name);
            fputc(',', out);
            csv_row_path(out, s, r, sc.chain);
            fprintf(out, ",%s,", s->hot[r].kind == TLOG_KIND_EXECUTION ? "E" : "C");
            tlog_csv_field_(out, x->device ? x->device : "");
            fprintf(out, ",%" PRIu64, s->hot[r].frames);
            for (int q = 0; q < 3; q++)
                csv_value(out, x, (tlog_stat_of)q);
            const tlog_row_ranks *k = tlog_row_ranks_(s, x);
            if (s->reduced && k) {
                fprintf(out, ",%u,", k->present);
                tlog_put_fixed_(out, k->median_sum / k->present, 1);
                fprintf(out, ",%" PRIu64 ",%u", k->p99_max, k->p99_max_rank);
            } else if (s->reduced) {
                fputs(",0,,,", out);
            }
            fputc('\n', out);
        }
    }
    scratch_free(&sc);
    return tlog_written_(out);
}

int tlog_summary_export_hitches_csv(const tlog_summary *s, FILE *out)
{
    scratch sc;
    int rc = export_begin(s, &out, &sc);
    if (rc != TLOG_OK)
        return rc;
    fputs("number,thread,root,rank,frame,duration_ns,reasons,budget_ns,quantile_ns,"
          "median_ns,slower\n", out);
    for (size_t k = 0; k < s->nhitches; k++) {
        const tlog_hitch *h = hitch_at(s, k);
        const tlog_group *g = &s->groups[h->group];
        fprintf(out, "%" PRIu64 ",", h->number);
        tlog_csv_field_(out, g->thread_name);
        fputc(',', out);
        tlog_csv_field_(out, s->hot[g->root].name);
        fprintf(out, ",%u,%" PRIu64 ",%" PRIu64 ",%s%s%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",",
                h->frame->rank, h->frame->serial, h->duration_ns,
                h->reasons & TLOG_HITCH_BUDGET ? "budget" : "",
                h->reasons == (TLOG_HITCH_BUDGET | TLOG_HITCH_QUANTILE) ? "+" : "",
                h->reasons & TLOG_HITCH_QUANTILE ? "quantile" : "", h->budget_ns,
                h->quantile_ns, h->median_ns);
        /* The rows that made it slow: "path +excess_ns; ...", one field. */
        uint32_t nodes[CULPRITS];
        uint64_t excess[CULPRITS];
        tlog_summary_map_frame_(s, h->frame, sc.map);
        size_t n = tlog_hitch_culprits_(s, h, sc.map, CULPRITS, nodes, excess);
        fputc('"', out);
        for (size_t c = 0; c < n; c++) {
            if (c)
                fputs("; ", out);
            put_node_path(out, &h->frame->nodes[nodes[c]], sc.chain, true);
            fprintf(out, " +%" PRIu64, excess[c]);
        }
        fputs("\"\n", out);
    }
    scratch_free(&sc);
    return tlog_written_(out);
}
