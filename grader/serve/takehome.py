"""What happens in a take-home, without the web: assessments, invites, the clock, drafts, runs and hand-ins.

The server's clock is the only one: a candidate's time starts when they press Start and ends
at the time limit or the assessment's closing, whichever is first; after it, nothing is saved
or run, and a candidate who has not handed in is handed in by the clock with their last saved
drafts (``hand_in_expired``). A hand-in grades every exercise once, final; a practice run grades
one exercise's visible checks, limited per candidate per minute and one at a time per exercise.
"""

from __future__ import annotations

import datetime as _dt

from sqlalchemy import func, select, update

from grader.serve import queue
from grader.serve.auth import new_token, token_hash
from grader.serve.db import Database
from grader.serve.errors import Refusal
from grader.serve.exercises import Exercises
from grader.serve.inputs import AssessmentForm, source_text
from grader.serve.models import Assessment, AssessmentExercise, Draft, Grading, Invite, now

SANDBOXES = ("docker", "local")
#: A save that arrives this late after the deadline (a request already on its way) is still taken.
GRACE_S = 5


def create_assessment(s, exercises: Exercises, user_id: int, form: AssessmentForm, *,
                      allow_local: bool) -> Assessment:
    if form.sandbox not in SANDBOXES or (form.sandbox == "local" and not allow_local):
        allowed = "docker or local" if allow_local else "docker (this server does not allow the local sandbox)"
        raise Refusal(400, f"The sandbox {form.sandbox!r} cannot be used here: choose {allowed}.",
                      fix="The local sandbox is not isolated; `grader serve --local-sandbox` allows it for trials.")
    if form.gpus:
        from grader.wire.grant import parse_gpus

        try:
            parse_gpus(form.gpus)
        except Exception as e:
            raise Refusal(400, f"GPUs {form.gpus!r}: {e}", fix="Give all, a count (2) or devices (device=0,1).")
    chosen = []
    for name in dict.fromkeys(form.exercises):
        try:
            chosen.append(exercises.get(name))
        except Exception as e:
            raise Refusal(400, f"The exercise {name[:100]!r} cannot be used: {str(e).splitlines()[0]}") from None
    a = Assessment(title=form.title, time_limit_s=form.time_limit_min * 60, opens_at=form.opens_at,
                   closes_at=form.closes_at, sandbox=form.sandbox, gpus=form.gpus or None,
                   runs_per_minute=form.runs_per_minute, max_concurrent=form.max_concurrent, created_by=user_id,
                   created_at=now())
    s.add(a)
    s.flush()
    for position, ex in enumerate(chosen):
        s.add(AssessmentExercise(assessment_id=a.id, position=position, name=ex.name, title=ex.title,
                                 submission=ex.config.exercise.submission, fingerprint=ex.fingerprint))
    return a


def exercises_of(s, assessment_id: int) -> list[AssessmentExercise]:
    return list(s.scalars(select(AssessmentExercise).where(AssessmentExercise.assessment_id == assessment_id)
                          .order_by(AssessmentExercise.position)))


def invite(s, a: Assessment, names: list[str]) -> list[tuple[Invite, str]]:
    """One invite and one link token per name (the token is shown once: only its hash is kept)."""
    taken = {n.casefold() for n in s.scalars(select(Invite.name).where(Invite.assessment_id == a.id))}
    for name in names:
        if name.casefold() in taken:
            raise Refusal(409, f"{name!r} is already invited to this assessment.",
                          fix="Give a new link to the existing invite instead, or another name.")
    made = []
    for name in names:
        token = new_token()
        i = Invite(assessment_id=a.id, name=name, token_hash=token_hash(token), csrf=new_token(), created_at=now())
        s.add(i)
        made.append((i, token))
    s.flush()
    return made


def new_link(s, i: Invite) -> str:
    """A new link for ``i``; the old one stops working at once (as does a revoked one)."""
    token = new_token()
    i.token_hash, i.revoked_at, i.csrf = token_hash(token), None, new_token()
    return token


def revoke(i: Invite) -> None:
    i.revoked_at = i.revoked_at or now()


# --- the clock ---------------------------------------------------------------------------------------------


def seconds_left(i: Invite, a: Assessment, t: _dt.datetime | None = None) -> float | None:
    """Time the candidate has left, from the server's clock; None before they start."""
    if i.deadline_at is None:
        return None
    return max(0.0, (i.deadline_at - (t or now())).total_seconds())


def start(i: Invite, a: Assessment) -> None:
    t = now()
    if i.started_at is not None:
        return
    if t < a.opens_at:
        raise Refusal(409, f"This assessment opens at {a.opens_at:%Y-%m-%d %H:%M} UTC.", fix="Come back then.")
    if t >= a.closes_at:
        raise Refusal(409, "This assessment has closed.", fix="Ask the hiring panel if you think this is wrong.")
    i.started_at = t
    i.deadline_at = min(t + _dt.timedelta(seconds=a.time_limit_s), a.closes_at)


def require_working(i: Invite, *, grace: bool = False) -> None:
    """The candidate may still change and run their answer: started, not handed in, within the time."""
    if i.handed_in_at is not None:
        raise Refusal(409, "Your answer is handed in; it can no longer be changed.")
    if i.started_at is None:
        raise Refusal(409, "The clock has not started.", fix="Press Start on the assessment's page first.")
    late = (now() - i.deadline_at).total_seconds()
    if late > (GRACE_S if grace else 0):
        raise Refusal(409, "Time is up: nothing more is saved or run. Your last saved answer is handed in.")


# --- drafts, runs and hand-ins -----------------------------------------------------------------------------


def save_draft(s, i: Invite, exercise: AssessmentExercise, text: str, seq: int) -> Draft:
    """Keep ``text`` as the exercise's draft unless a later save (higher ``seq``) from the page is kept already."""
    require_working(i, grace=True)
    source_text(text.encode("utf-8", "surrogatepass"), "The answer")
    if "\x00" in text:
        raise Refusal(400, "The answer holds a NUL character.", fix="Remove it and save again.")
    d = s.get(Draft, (i.id, exercise.name))
    if d is None:
        d = Draft(invite_id=i.id, exercise=exercise.name, text=text, seq=seq, saved_at=now())
        s.add(d)
    elif seq > d.seq:
        d.text, d.seq, d.saved_at = text, seq, now()
    return d


def answer(s, exercises: Exercises, i: Invite, exercise: AssessmentExercise) -> str:
    """What the candidate has now: their saved draft, else the exercise's stub."""
    d = s.get(Draft, (i.id, exercise.name))
    return d.text if d is not None else exercises.public(exercise.name).stub


def run(s, exercises: Exercises, i: Invite, a: Assessment, exercise: AssessmentExercise) -> Grading:
    """A practice run of the saved answer (visible checks): limited per minute, one at a time per exercise."""
    require_working(i)
    window = now() - _dt.timedelta(seconds=60)
    recent = s.scalars(select(Grading.created_at).where(Grading.invite_id == i.id, Grading.kind == queue.RUN,
                                                        Grading.created_at > window)
                       .order_by(Grading.created_at)).all()
    if len(recent) >= a.runs_per_minute:
        wait = max(1, int(60 - (now() - recent[0]).total_seconds()) + 1)
        raise Refusal(429, f"Checks can be run {a.runs_per_minute} times a minute; try again in {wait} s.")
    pending = s.scalar(select(func.count()).select_from(Grading).where(
        Grading.invite_id == i.id, Grading.exercise == exercise.name, Grading.kind == queue.RUN,
        Grading.status.in_((queue.QUEUED, queue.RUNNING))))
    if pending:
        raise Refusal(409, "The checks are already running for this exercise.", fix="Wait for that run to finish.")
    source = answer(s, exercises, i, exercise).encode("utf-8")
    return queue.enqueue(s, invite=i, exercise=exercise.name, kind=queue.RUN, filename=exercise.submission,
                         source=source)


def hand_in(s, exercises: Exercises, i: Invite, by: str) -> list[Grading]:
    """Hand in every exercise's answer, once: the first hand-in wins (a second one, or the clock's, does nothing)."""
    done = s.execute(update(Invite).where(Invite.id == i.id, Invite.handed_in_at.is_(None))
                     .values(handed_in_at=now(), handed_in_by=by))
    if done.rowcount != 1:
        return []
    return [queue.enqueue(s, invite=i, exercise=ex.name, kind=queue.HANDIN, filename=ex.submission,
                          source=answer(s, exercises, i, ex).encode("utf-8"))
            for ex in exercises_of(s, i.assessment_id)]


def hand_in_expired(db: Database, exercises: Exercises) -> int:
    """Hand in, with their last saved drafts, the candidates whose time ran out (the clock's hand-in)."""
    with db.read() as s:
        due = s.scalars(select(Invite.id).where(Invite.handed_in_at.is_(None), Invite.revoked_at.is_(None),
                                                Invite.deadline_at < now() - _dt.timedelta(seconds=GRACE_S))).all()
    count = 0
    for invite_id in due:
        with db.write() as s:
            i = s.get(Invite, invite_id)
            count += bool(hand_in(s, exercises, i, "clock"))
    return count
