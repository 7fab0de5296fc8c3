/*
 * The simulated device: in-order queues of kernels and markers, run by a
 * worker thread against a device clock, behind the backend interface.
 *
 * Everything the device does happens under one lock. A query or a wait
 * first runs whatever is due by the current time, so that it sees what a
 * GPU would have done by then however late the worker thread is scheduled.
 */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>

#include "device.h"
#include "timerlog/sim.h"

enum marker_state { M_IDLE, M_RECORDED, M_REACHED, M_HUNG };

struct tlog_sim_marker {
    _Atomic int state;
    bool own;                 /* last recorded on the library's own queue */
    uint64_t ts;              /* when reached; written before state */
};
typedef struct tlog_sim_marker sim_marker;

/* A queue that reaches a wait for a closed gate stops there. */
struct tlog_sim_gate {
    bool open;
    uint64_t opened_at;
    unsigned refs;            /* its owner and each queued wait */
};

typedef struct item {
    struct item *next;
    uint64_t submit;
    uint64_t duration;        /* kernels */
    sim_marker *marker;       /* markers; NULL for kernels and dead markers */
    tlog_sim_gate *gate;      /* waits for a gate */
    bool is_marker;
    bool hang;
    bool stall;               /* reaching it halts the queue for good */
} item;

struct tlog_sim_queue {
    tlog_sim_queue *next;
    item *head, *tail;
    uint64_t free_at;         /* when the last item finished */
    bool stalled;             /* halted by TLOG_SIM_FAULT_STALL */
};

struct tlog_sim {
    pthread_mutex_t lock;
    pthread_cond_t work;      /* something to run */
    pthread_cond_t done;      /* the worker ran */
    pthread_t worker;
    bool stop;
    tlog_sim_clock_fn clock;
    void *clock_user;
    _Atomic uint64_t manual;
    uint64_t marker_ns;
    tlog_sim_queue *queues;
    tlog_sim_queue *fallback; /* the NULL queue */
    tlog_sim_queue *own;      /* the library's */
    uint64_t gen, ran_gen;    /* changes seen / run by the worker */
    unsigned faults[6];
    bool worker_started;
    struct {
        _Atomic uint64_t records, queries, waits, elapsed, live, created, rerecords;
    } stats;
};

#define SCOUNT(sim, f) atomic_fetch_add_explicit(&(sim)->stats.f, 1, memory_order_relaxed)

uint64_t tlog_sim_now(tlog_sim *sim)
{
    if (!sim)
        return 0;
    return sim->clock ? sim->clock(sim->clock_user)
                      : atomic_load_explicit(&sim->manual, memory_order_acquire);
}

tlog_ticks tlog_sim_clock(void *sim)
{
    return tlog_sim_now(sim);
}

/* ------------------------------------------------------------------------ */
/* Running queues (under the lock)                                          */
/* ------------------------------------------------------------------------ */

static uint64_t start_of(const tlog_sim_queue *q, const item *it)
{
    return it->submit > q->free_at ? it->submit : q->free_at;
}

/* When a kernel that starts at `start` ends: a duration past the end of
 * the clock keeps its queue busy for good rather than wrap around. */
static uint64_t end_of(uint64_t start, uint64_t duration)
{
    return duration > UINT64_MAX - start ? UINT64_MAX : start + duration;
}

static void gate_put(tlog_sim_gate *g)
{
    if (--g->refs == 0)
        free(g);
}

/* When the head of q next changes something, or UINT64_MAX if idle or
 * waiting for a closed gate. */
static uint64_t next_event(const tlog_sim_queue *q)
{
    if (!q->head || q->stalled)
        return UINT64_MAX;
    const item *it = q->head;
    uint64_t start = start_of(q, it);
    if (it->gate)
        return !it->gate->open ? UINT64_MAX
               : it->gate->opened_at > start ? it->gate->opened_at : start;
    return it->is_marker ? start : end_of(start, it->duration);
}

static void reach(tlog_sim *sim, tlog_sim_queue *q, item *it, uint64_t start)
{
    q->free_at = end_of(start, sim->marker_ns);
    if (!it->marker)
        return;
    if (it->hang) {
        atomic_store_explicit(&it->marker->state, M_HUNG, memory_order_release);
        return;
    }
    it->marker->ts = start;
    atomic_store_explicit(&it->marker->state, M_REACHED, memory_order_release);
}

static void run_queue(tlog_sim *sim, tlog_sim_queue *q, uint64_t now)
{
    while (q->head && next_event(q) <= now) {
        item *it = q->head;
        uint64_t start = start_of(q, it);
        if (it->stall) {
            q->stalled = true;   /* like a device that hangs: nothing after runs */
            if (it->marker)
                atomic_store_explicit(&it->marker->state, M_HUNG, memory_order_release);
            return;
        }
        if (it->gate) {
            q->free_at = next_event(q);
            gate_put(it->gate);
        } else if (it->is_marker) {
            reach(sim, q, it, start);
        } else {
            q->free_at = end_of(start, it->duration);
        }
        q->head = it->next;
        if (!q->head)
            q->tail = NULL;
        free(it);
    }
}

static void run_all(tlog_sim *sim, uint64_t now)
{
    for (tlog_sim_queue *q = sim->queues; q; q = q->next)
        run_queue(sim, q, now);
    pthread_cond_broadcast(&sim->done);
}

/* Manual clock only: moves time to the next thing any queue does. */
static bool jump(tlog_sim *sim)
{
    uint64_t next = UINT64_MAX;
    for (tlog_sim_queue *q = sim->queues; q; q = q->next) {
        uint64_t e = next_event(q);
        if (e < next)
            next = e;
    }
    if (next == UINT64_MAX)
        return false;
    uint64_t now = atomic_load(&sim->manual);
    if (next > now)
        atomic_store_explicit(&sim->manual, now = next, memory_order_release);
    run_all(sim, now);
    return true;
}

static void *worker_main(void *arg)
{
    tlog_sim *sim = arg;
    pthread_mutex_lock(&sim->lock);
    while (!sim->stop) {
        uint64_t gen = sim->gen;
        run_all(sim, tlog_sim_now(sim));
        sim->ran_gen = gen;
        pthread_cond_broadcast(&sim->done);
        if (sim->gen != gen)
            continue;
        if (sim->clock) {
            /* A clock that moves by itself: look again soon. */
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            ts.tv_nsec += 100000;
            if (ts.tv_nsec >= 1000000000) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000;
            }
            pthread_cond_timedwait(&sim->work, &sim->lock, &ts);
        } else {
            pthread_cond_wait(&sim->work, &sim->lock);
        }
    }
    pthread_mutex_unlock(&sim->lock);
    return NULL;
}

/* Caller holds the lock. */
static void changed(tlog_sim *sim)
{
    sim->gen++;
    pthread_cond_signal(&sim->work);
}

/* ------------------------------------------------------------------------ */
/* The simulator                                                            */
/* ------------------------------------------------------------------------ */

static tlog_sim_queue *queue_new(tlog_sim *sim)
{
    tlog_sim_queue *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    pthread_mutex_lock(&sim->lock);
    q->free_at = tlog_sim_now(sim);
    q->next = sim->queues;
    sim->queues = q;
    pthread_mutex_unlock(&sim->lock);
    return q;
}

static void free_queues(tlog_sim *sim)
{
    while (sim->queues) {
        tlog_sim_queue *q = sim->queues;
        sim->queues = q->next;
        while (q->head) {
            item *it = q->head;
            q->head = it->next;
            if (it->gate)
                gate_put(it->gate);
            free(it);
        }
        free(q);
    }
}

int tlog_sim_create(const tlog_sim_config *config, tlog_sim **out)
{
    if (!out)
        return TLOG_EINVAL;
    *out = NULL;
    tlog_sim_config cfg = {0};
    if (config) {
        size_t n = config->size ? config->size : sizeof cfg;
        /* A size no struct has would cut a pointer (the clock) in two. */
        if (n < sizeof(size_t) || n % sizeof(void *))
            return TLOG_EINVAL;
        memcpy(&cfg, config, n < sizeof cfg ? n : sizeof cfg);
    }
    tlog_sim *sim = calloc(1, sizeof *sim);
    if (!sim)
        return TLOG_ENOMEM;
    sim->clock = cfg.clock;
    sim->clock_user = cfg.clock_user;
    sim->marker_ns = cfg.marker_ns;
    pthread_mutex_init(&sim->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&sim->work, &attr);
    pthread_cond_init(&sim->done, &attr);
    pthread_condattr_destroy(&attr);
    sim->fallback = queue_new(sim);
    sim->own = queue_new(sim);
    sim->worker_started = sim->fallback && sim->own &&
                          pthread_create(&sim->worker, NULL, worker_main, sim) == 0;
    if (!sim->worker_started) {
        tlog_sim_destroy(sim);
        return TLOG_ENOMEM;
    }
    *out = sim;
    return TLOG_OK;
}

void tlog_sim_destroy(tlog_sim *sim)
{
    if (!sim)
        return;
    if (sim->worker_started) {
        pthread_mutex_lock(&sim->lock);
        sim->stop = true;
        pthread_cond_signal(&sim->work);
        pthread_mutex_unlock(&sim->lock);
        pthread_join(sim->worker, NULL);
    }
    free_queues(sim);
    pthread_cond_destroy(&sim->work);
    pthread_cond_destroy(&sim->done);
    pthread_mutex_destroy(&sim->lock);
    free(sim);
}

tlog_sim_queue *tlog_sim_queue_create(tlog_sim *sim)
{
    return sim ? queue_new(sim) : NULL;
}

static int push(tlog_sim *sim, tlog_sim_queue *q, item *it)
{
    it->next = NULL;
    it->submit = tlog_sim_now(sim);
    if (q->tail)
        q->tail->next = it;
    else
        q->head = it;
    q->tail = it;
    changed(sim);
    return TLOG_OK;
}

int tlog_sim_launch(tlog_sim *sim, tlog_sim_queue *queue, uint64_t duration_ns)
{
    if (!sim)
        return TLOG_EINVAL;
    item *it = calloc(1, sizeof *it);
    if (!it)
        return TLOG_ENOMEM;
    it->duration = duration_ns;
    pthread_mutex_lock(&sim->lock);
    push(sim, queue ? queue : sim->fallback, it);
    pthread_mutex_unlock(&sim->lock);
    return TLOG_OK;
}

int tlog_sim_gate_create(tlog_sim *sim, tlog_sim_gate **out)
{
    if (out)
        *out = NULL;
    if (!sim || !out)
        return TLOG_EINVAL;
    *out = calloc(1, sizeof **out);
    if (!*out)
        return TLOG_ENOMEM;
    (*out)->refs = 1;
    return TLOG_OK;
}

int tlog_sim_gate_wait(tlog_sim *sim, tlog_sim_queue *queue, tlog_sim_gate *gate)
{
    if (!sim || !gate)
        return TLOG_EINVAL;
    item *it = calloc(1, sizeof *it);
    if (!it)
        return TLOG_ENOMEM;
    it->gate = gate;
    pthread_mutex_lock(&sim->lock);
    gate->refs++;
    push(sim, queue ? queue : sim->fallback, it);
    pthread_mutex_unlock(&sim->lock);
    return TLOG_OK;
}

static void gate_set(tlog_sim *sim, tlog_sim_gate *gate, bool open)
{
    pthread_mutex_lock(&sim->lock);
    if (open && !gate->open)
        gate->opened_at = tlog_sim_now(sim);
    gate->open = open;
    changed(sim);
    pthread_mutex_unlock(&sim->lock);
}

void tlog_sim_gate_open(tlog_sim *sim, tlog_sim_gate *gate)
{
    if (sim && gate)
        gate_set(sim, gate, true);
}

void tlog_sim_gate_close(tlog_sim *sim, tlog_sim_gate *gate)
{
    if (sim && gate)
        gate_set(sim, gate, false);
}

void tlog_sim_gate_destroy(tlog_sim *sim, tlog_sim_gate *gate)
{
    if (!sim || !gate)
        return;
    gate_set(sim, gate, true);
    pthread_mutex_lock(&sim->lock);
    gate_put(gate);
    pthread_mutex_unlock(&sim->lock);
}

int tlog_sim_hold(tlog_sim *sim, tlog_sim_queue *queue, tlog_sim_gate **out)
{
    if (!out)
        return TLOG_EINVAL;
    *out = NULL;
    tlog_sim_gate *gate = NULL;
    int rc = tlog_sim_gate_create(sim, &gate);
    if (rc == TLOG_OK)
        rc = tlog_sim_gate_wait(sim, queue, gate);
    if (rc != TLOG_OK) {
        tlog_sim_gate_destroy(sim, gate);
        return rc;
    }
    *out = gate;
    return TLOG_OK;
}

void tlog_sim_advance(tlog_sim *sim, uint64_t ns)
{
    if (!sim || sim->clock)
        return;
    pthread_mutex_lock(&sim->lock);
    /* What is due now happens now, before time moves: a marker on an idle
     * queue is reached when recorded, however late the worker runs. */
    uint64_t now = atomic_load_explicit(&sim->manual, memory_order_acquire);
    run_all(sim, now);
    /* The clock stops at its end rather than wrap back to the start. */
    atomic_store_explicit(&sim->manual, ns > UINT64_MAX - now ? UINT64_MAX : now + ns,
                          memory_order_release);
    changed(sim);
    pthread_mutex_unlock(&sim->lock);
}

void tlog_sim_settle(tlog_sim *sim)
{
    if (!sim)
        return;
    pthread_mutex_lock(&sim->lock);
    changed(sim);
    uint64_t want = sim->gen;
    while (sim->ran_gen < want)
        pthread_cond_wait(&sim->done, &sim->lock);
    pthread_mutex_unlock(&sim->lock);
}

static bool deadline_passed(const struct timespec *deadline)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > deadline->tv_sec ||
           (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec);
}

static struct timespec deadline_in(uint64_t ns)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t total = (uint64_t)ts.tv_nsec + ns % 1000000000u;
    ts.tv_sec += (time_t)(ns / 1000000000u + total / 1000000000u);
    ts.tv_nsec = (long)(total % 1000000000u);
    return ts;
}

/* Caller holds the lock. Blocks until `ready` or the deadline; the manual
 * clock moves forward instead while there is work that could make it so. */
static int wait_until(tlog_sim *sim, bool (*ready)(void *), void *arg,
                      const struct timespec *deadline)
{
    for (;;) {
        run_all(sim, tlog_sim_now(sim));
        if (ready(arg))
            break;
        if (!sim->clock && jump(sim))
            continue;
        if (deadline_passed(deadline))
            return TLOG_ETIMEDOUT;
        pthread_cond_timedwait(&sim->done, &sim->lock, deadline);
    }
    return TLOG_OK;
}

static bool queue_empty(void *q)
{
    return ((tlog_sim_queue *)q)->head == NULL;
}

int tlog_sim_queue_sync(tlog_sim *sim, tlog_sim_queue *queue)
{
    if (!sim)
        return TLOG_EINVAL;
    struct timespec never = deadline_in(UINT64_C(1) << 62);
    pthread_mutex_lock(&sim->lock);
    int rc = wait_until(sim, queue_empty, queue ? queue : sim->fallback, &never);
    pthread_mutex_unlock(&sim->lock);
    return rc;
}

int tlog_sim_inject(tlog_sim *sim, int fault, unsigned count)
{
    if (!sim || fault < TLOG_SIM_FAULT_HANG || fault > TLOG_SIM_FAULT_STALL)
        return TLOG_EINVAL;
    pthread_mutex_lock(&sim->lock);
    unsigned *armed = &sim->faults[fault];
    *armed = count > UINT_MAX - *armed ? UINT_MAX : *armed + count;
    pthread_mutex_unlock(&sim->lock);
    return TLOG_OK;
}

/* Caller holds the lock. */
static bool take_fault(tlog_sim *sim, int fault)
{
    if (!sim->faults[fault])
        return false;
    sim->faults[fault]--;
    return true;
}

int tlog_sim_get_stats(tlog_sim *sim, tlog_sim_stats *out)
{
    if (!sim || !out || out->size < sizeof(size_t))
        return TLOG_EINVAL;
    tlog_sim_stats s = {
        .size = sizeof s,
        .records = atomic_load(&sim->stats.records),
        .queries = atomic_load(&sim->stats.queries),
        .waits = atomic_load(&sim->stats.waits),
        .elapsed = atomic_load(&sim->stats.elapsed),
        .markers_live = atomic_load(&sim->stats.live),
        .markers_created = atomic_load(&sim->stats.created),
        .rerecords_in_flight = atomic_load(&sim->stats.rerecords),
    };
    size_t n = out->size < sizeof s ? out->size : sizeof s;
    memcpy((char *)out + sizeof(size_t), (char *)&s + sizeof(size_t), n - sizeof(size_t));
    return TLOG_OK;
}

/* ------------------------------------------------------------------------ */
/* The backend interface                                                    */
/* ------------------------------------------------------------------------ */

static int sim_marker_create(void *impl, tlog_marker *out)
{
    tlog_sim *sim = impl;
    sim_marker *m = calloc(1, sizeof *m);
    if (!m)
        return TLOG_ENOMEM;
    atomic_init(&m->state, M_IDLE);
    SCOUNT(sim, created);
    SCOUNT(sim, live);
    *out = (tlog_marker)m;
    return TLOG_OK;
}

static void sim_marker_destroy(void *impl, tlog_marker marker)
{
    tlog_sim *sim = impl;
    sim_marker *m = (sim_marker *)marker;
    /* Allowed while in flight: the queue keeps the slot, not the marker. */
    pthread_mutex_lock(&sim->lock);
    for (tlog_sim_queue *q = sim->queues; q; q = q->next)
        for (item *it = q->head; it; it = it->next)
            if (it->marker == m)
                it->marker = NULL;
    pthread_mutex_unlock(&sim->lock);
    atomic_fetch_sub(&sim->stats.live, 1);
    free(m);
}

static int record_on(tlog_sim *sim, tlog_sim_queue *q, sim_marker *m, bool own)
{
    item *it = calloc(1, sizeof *it);
    if (!it)
        return TLOG_ENOMEM;
    it->is_marker = true;
    it->marker = m;
    pthread_mutex_lock(&sim->lock);
    int rc = TLOG_OK;
    if (!own && take_fault(sim, TLOG_SIM_FAULT_RECORD_ERROR))
        rc = TLOG_EDEVICE;
    else if (!own && take_fault(sim, TLOG_SIM_FAULT_CAPTURE))
        rc = TLOG_ECAPTURE;
    if (rc != TLOG_OK) {
        pthread_mutex_unlock(&sim->lock);
        free(it);
        return rc;
    }
    it->hang = !own && take_fault(sim, TLOG_SIM_FAULT_HANG);
    it->stall = !own && take_fault(sim, TLOG_SIM_FAULT_STALL);
    int state = atomic_load(&m->state);
    if (state == M_RECORDED || state == M_HUNG)
        SCOUNT(sim, rerecords);   /* the first timestamp is lost, as on a GPU */
    m->own = own;
    atomic_store_explicit(&m->state, M_RECORDED, memory_order_release);
    push(sim, q, it);
    pthread_mutex_unlock(&sim->lock);
    SCOUNT(sim, records);
    return TLOG_OK;
}

static int sim_record(void *impl, void *queue, tlog_marker marker)
{
    tlog_sim *sim = impl;
    return record_on(sim, queue ? queue : sim->fallback, (sim_marker *)marker, false);
}

static int sim_record_own(void *impl, tlog_marker marker)
{
    tlog_sim *sim = impl;
    return record_on(sim, sim->own, (sim_marker *)marker, true);
}

static int state_code(int state)
{
    return state == M_REACHED || state == M_IDLE ? TLOG_OK : TLOG_PENDING;
}

static int sim_query(void *impl, tlog_marker marker)
{
    tlog_sim *sim = impl;
    sim_marker *m = (sim_marker *)marker;
    SCOUNT(sim, queries);
    pthread_mutex_lock(&sim->lock);
    bool fail = !m->own && take_fault(sim, TLOG_SIM_FAULT_QUERY_ERROR);
    if (!fail && atomic_load(&m->state) == M_RECORDED)
        run_all(sim, tlog_sim_now(sim));
    int state = atomic_load_explicit(&m->state, memory_order_acquire);
    pthread_mutex_unlock(&sim->lock);
    return fail ? TLOG_EDEVICE : state_code(state);
}

static bool marker_done(void *m)
{
    return state_code(atomic_load(&((sim_marker *)m)->state)) == TLOG_OK;
}

static int sim_wait(void *impl, tlog_marker marker, uint64_t timeout_ns)
{
    tlog_sim *sim = impl;
    SCOUNT(sim, waits);
    struct timespec deadline = deadline_in(timeout_ns);
    pthread_mutex_lock(&sim->lock);
    int rc = wait_until(sim, marker_done, (void *)marker, &deadline);
    pthread_mutex_unlock(&sim->lock);
    return rc;
}

static int sim_elapsed(void *impl, tlog_marker from, tlog_marker to, int64_t *ns)
{
    tlog_sim *sim = impl;
    sim_marker *a = (sim_marker *)from, *b = (sim_marker *)to;
    SCOUNT(sim, elapsed);
    int sa = atomic_load_explicit(&a->state, memory_order_acquire);
    int sb = atomic_load_explicit(&b->state, memory_order_acquire);
    if (sa == M_IDLE || sb == M_IDLE)
        return TLOG_EINVAL;
    if (sa != M_REACHED || sb != M_REACHED)
        return TLOG_PENDING;
    *ns = (int64_t)(b->ts - a->ts);
    return TLOG_OK;
}

static int sim_enqueue_empty(void *impl)
{
    tlog_sim *sim = impl;
    return tlog_sim_launch(sim, sim->own, 0);
}

static int sim_hold_own(void *impl, void **hold)
{
    tlog_sim *sim = impl;
    tlog_sim_gate *gate = NULL;
    int rc = tlog_sim_hold(sim, sim->own, &gate);
    *hold = gate;
    return rc;
}

static int sim_release_own(void *impl, void *hold)
{
    tlog_sim_gate_destroy(impl, hold);
    return TLOG_OK;
}

static const tlog_device_ops sim_ops = {
    .size = sizeof(tlog_device_ops),
    .abi = TLOG_DEVICE_ABI,
    .backend = "sim",
    .marker_create = sim_marker_create,
    .marker_destroy = sim_marker_destroy,
    .record = sim_record,
    .record_own = sim_record_own,
    .query = sim_query,
    .wait = sim_wait,
    .elapsed_ns = sim_elapsed,
    .enqueue_empty = sim_enqueue_empty,
    .hold_own = sim_hold_own,
    .release_own = sim_release_own,
};

int tlog_sim_device_create(tlog_sim *sim, tlog_log *log, const tlog_device_config *config,
                           tlog_device **out)
{
    if (!sim) {
        if (out)
            *out = NULL;
        return TLOG_EINVAL;
    }
    return tlog_device_register_(log, &sim_ops, sim, "sim", config, out);
}

/* ------------------------------------------------------------------------ */
/* Markers for test runtimes                                                */
/* ------------------------------------------------------------------------ */

int tlog_sim_marker_create(tlog_sim *sim, tlog_sim_marker **out)
{
    if (out)
        *out = NULL;
    if (!sim || !out)
        return TLOG_EINVAL;
    tlog_marker m = 0;
    int rc = sim_marker_create(sim, &m);
    *out = (tlog_sim_marker *)m;
    return rc;
}

void tlog_sim_marker_destroy(tlog_sim *sim, tlog_sim_marker *marker)
{
    if (sim && marker)
        sim_marker_destroy(sim, (tlog_marker)marker);
}

int tlog_sim_marker_record(tlog_sim *sim, tlog_sim_queue *queue, tlog_sim_marker *marker)
{
    return sim && marker ? sim_record(sim, queue, (tlog_marker)marker) : TLOG_EINVAL;
}

int tlog_sim_marker_query(tlog_sim *sim, tlog_sim_marker *marker)
{
    return sim && marker ? sim_query(sim, (tlog_marker)marker) : TLOG_EINVAL;
}

int tlog_sim_marker_wait(tlog_sim *sim, tlog_sim_marker *marker, uint64_t timeout_ns)
{
    return sim && marker ? sim_wait(sim, (tlog_marker)marker, timeout_ns) : TLOG_EINVAL;
}

int tlog_sim_marker_time(tlog_sim *sim, tlog_sim_marker *marker, uint64_t *ns)
{
    if (!sim || !marker || !ns)
        return TLOG_EINVAL;
    int state = atomic_load_explicit(&marker->state, memory_order_acquire);
    if (state == M_IDLE)
        return TLOG_EINVAL;
    if (state != M_REACHED)
        return TLOG_PENDING;
    *ns = marker->ts;
    return TLOG_OK;
}
