//! The submitter's side of a running turn: its events read from the
//! session's stream as the workers write them, the questions it waits on
//! handed to whoever answers where the submitter is (one at a time, a
//! prompt withdrawn when someone answers elsewhere first), an interrupt
//! turned into the engine's cancel, and the engine's result at the end.
//!
//! What is shown, and how a person is asked, is the front end's: it
//! hears each [`Heard`] and may give an [`Answerer`].

use crate::client::{Cluster, Submitted};
use crate::question::{Answer, Question};
use crate::stream::{Item, StreamReader, stream_path};
use crate::worker::TurnRequest;
use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use kaizen_protocol::{CancellationToken, Event, RunResult};
use kaizen_session_store::SessionStore;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

/// How often the session's stream is read for new events.
const POLL: Duration = Duration::from_millis(100);

/// Answers a turn's questions where its submitter is (a terminal, an
/// editor).
pub trait Answerer: Send + Sync {
    /// The answer to `question`. The future is dropped, unanswered, when
    /// someone answers elsewhere first or the turn ends.
    fn answer<'a>(&'a self, question: &'a Question) -> BoxFuture<'a, Answer>;
}

/// What following a turn hears, for the front end to show.
#[derive(Debug)]
pub enum Heard {
    /// One of the turn's events (its result comes from the engine, at
    /// the end).
    Event(Event),
    /// A question no [`Answerer`] here can take: it waits for an answer
    /// given elsewhere (`kaizen approve`).
    Unanswerable(Question),
    /// The question asked here was answered elsewhere; its prompt is
    /// withdrawn.
    AnsweredElsewhere,
    /// The engine could not be reached to cancel the turn or to give it
    /// an answer.
    Unreached(String),
}

/// How following a turn ended.
pub struct Followed {
    /// The turn's result, as the engine gives it.
    pub result: Result<RunResult, String>,
    /// A question was being asked here when the turn ended.
    pub unanswered: bool,
}

/// A turn sent to the engine, its events read from where the session's
/// stream stood before it was sent.
pub struct Following {
    submitted: Submitted,
    reader: StreamReader,
}

impl Following {
    /// Sends `request` as a turn of `session` to `cluster`; its events
    /// are looked for in `store`'s stream of the session.
    pub async fn submit(
        cluster: &Cluster,
        store: &SessionStore,
        session: &str,
        request: &TurnRequest,
    ) -> Result<Self, String> {
        let path = stream_path(store, session);
        // Marked before sending: the turn's first events may come at once.
        let reader = StreamReader::new(&path, &request.turn, StreamReader::end_of(&path));
        let submitted = cluster.submit(session, request).await?;
        Ok(Self { submitted, reader })
    }

    /// The engine's id of the turn's invocation.
    pub fn invocation(&self) -> &str {
        &self.submitted.invocation
    }

    /// Follows the turn to its end: `heard` is told what happens, questions
    /// go to `answerer` (or are [`Heard::Unanswerable`] without one), and
    /// `interrupt` asks the engine to cancel the turn.
    pub async fn follow(
        mut self,
        cluster: &Cluster,
        answerer: Option<Arc<dyn Answerer>>,
        interrupt: &CancellationToken,
        heard: &mut dyn FnMut(Heard),
    ) -> Followed {
        let mut questions = Questions::new(answerer);
        let result = cluster.result(&self.submitted);
        tokio::pin!(result);
        let mut cancelling = false;
        let result = loop {
            tokio::select! {
                result = &mut result => break result,
                () = interrupt.cancelled(), if !cancelling => {
                    cancelling = true;
                    if let Err(err) = cluster.cancel(&self.submitted).await {
                        heard(Heard::Unreached(err));
                    }
                }
                Some((id, answer)) = questions.open.next() => {
                    if let Err(err) = cluster.answer(&id, &answer).await {
                        heard(Heard::Unreached(err));
                    }
                    questions.done(&id);
                }
                () = tokio::time::sleep(POLL) => questions.read(&mut self.reader, heard),
            }
        };
        questions.ended = true;
        questions.read(&mut self.reader, heard);
        Followed {
            result,
            unanswered: questions.asking.is_some(),
        }
    }
}

/// The questions the turn waits on, asked one at a time.
struct Questions {
    answerer: Option<Arc<dyn Answerer>>,
    waiting: VecDeque<(String, Question)>,
    /// The id of the question being asked now.
    asking: Option<String>,
    /// Its prompt, which ends with the id and the answer.
    open: FuturesUnordered<BoxFuture<'static, (String, Answer)>>,
    /// The turn has ended: no new question is asked.
    ended: bool,
}

impl Questions {
    fn new(answerer: Option<Arc<dyn Answerer>>) -> Self {
        Self {
            answerer,
            waiting: VecDeque::new(),
            asking: None,
            open: FuturesUnordered::new(),
            ended: false,
        }
    }

    /// What the stream says since the last read.
    fn read(&mut self, reader: &mut StreamReader, heard: &mut dyn FnMut(Heard)) {
        for item in reader.read_new() {
            match item {
                // The result is the engine's, told once at the end.
                Item::Event(Event::Result(_)) => {}
                Item::Event(event) => heard(Heard::Event(event)),
                Item::Asked { id, question } => self.asked(id, question, heard),
                Item::Answered(id) => self.answered(&id, heard),
            }
        }
    }

    fn asked(&mut self, id: String, question: Question, heard: &mut dyn FnMut(Heard)) {
        if self.ended {
            return;
        }
        if self.answerer.is_none() {
            heard(Heard::Unanswerable(question));
            return;
        }
        self.waiting.push_back((id, question));
        self.ask_next();
    }

    /// Someone answered `id` (here, or elsewhere): its prompt, if open,
    /// is withdrawn.
    fn answered(&mut self, id: &str, heard: &mut dyn FnMut(Heard)) {
        self.waiting.retain(|(waiting, _)| waiting != id);
        if self.asking.as_deref() == Some(id) {
            self.open.clear();
            self.asking = None;
            heard(Heard::AnsweredElsewhere);
            self.ask_next();
        }
    }

    /// The prompt for `id` ended with an answer.
    fn done(&mut self, id: &str) {
        if self.asking.as_deref() == Some(id) {
            self.asking = None;
        }
        self.ask_next();
    }

    /// Opens the next prompt when none is open.
    fn ask_next(&mut self) {
        let Some(answerer) = &self.answerer else {
            return;
        };
        if self.asking.is_some() || self.ended {
            return;
        }
        let Some((id, question)) = self.waiting.pop_front() else {
            return;
        };
        self.asking = Some(id.clone());
        let answerer = answerer.clone();
        self.open.push(Box::pin(async move {
            let answer = answerer.answer(&question).await;
            (id, answer)
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Answers every question the same way, at once.
    struct Agrees;

    impl Answerer for Agrees {
        fn answer<'a>(&'a self, _: &'a Question) -> BoxFuture<'a, Answer> {
            Box::pin(async { Answer::Once })
        }
    }

    fn question(plugin: &str) -> Question {
        Question::Choices {
            plugin: plugin.to_string(),
            questions: Vec::new(),
        }
    }

    /// What `questions` tells the front end while `act` runs.
    fn heard_by(
        questions: &mut Questions,
        act: impl FnOnce(&mut Questions, &mut dyn FnMut(Heard)),
    ) -> Vec<String> {
        let mut heard = Vec::new();
        act(questions, &mut |item| heard.push(format!("{item:?}")));
        heard
    }

    #[test]
    fn without_an_answerer_each_question_waits_for_an_answer_from_elsewhere() {
        let mut questions = Questions::new(None);
        let heard = heard_by(&mut questions, |q, heard| {
            q.asked("a".into(), question("one"), heard);
        });
        assert_eq!(heard.len(), 1);
        assert!(heard[0].starts_with("Unanswerable"), "{heard:?}");
        assert!(questions.open.is_empty());
        questions.ended = true;
        let heard = heard_by(&mut questions, |q, heard| {
            q.asked("b".into(), question("two"), heard);
        });
        assert!(
            heard.is_empty(),
            "a question after the end is not told: {heard:?}"
        );
    }

    #[test]
    fn questions_are_asked_one_at_a_time_and_withdrawn_when_answered_elsewhere() {
        let mut questions = Questions::new(Some(Arc::new(Agrees)));
        let heard = heard_by(&mut questions, |q, heard| {
            q.asked("a".into(), question("one"), heard);
            q.asked("b".into(), question("two"), heard);
            q.asked("c".into(), question("three"), heard);
            // A waiting question answered elsewhere just leaves the queue.
            q.answered("c", heard);
        });
        assert!(heard.is_empty(), "{heard:?}");
        assert_eq!(questions.asking.as_deref(), Some("a"));
        assert_eq!(questions.open.len(), 1);
        assert_eq!(questions.waiting.len(), 1);
        let heard = heard_by(&mut questions, |q, heard| q.answered("a", heard));
        assert_eq!(heard, ["AnsweredElsewhere"]);
        assert_eq!(questions.asking.as_deref(), Some("b"));
        assert_eq!(questions.open.len(), 1);
        assert!(questions.waiting.is_empty());
    }

    #[tokio::test]
    async fn an_answer_given_here_opens_the_next_prompt() {
        let mut questions = Questions::new(Some(Arc::new(Agrees)));
        heard_by(&mut questions, |q, heard| {
            q.asked("a".into(), question("one"), heard);
            q.asked("b".into(), question("two"), heard);
        });
        let (id, answer) = questions.open.next().await.unwrap();
        assert_eq!((id.as_str(), answer), ("a", Answer::Once));
        questions.done(&id);
        assert_eq!(questions.asking.as_deref(), Some("b"));
        questions.ended = true;
        heard_by(&mut questions, |q, heard| {
            q.asked("c".into(), question("three"), heard);
        });
        assert!(
            questions.waiting.is_empty(),
            "no question is taken after the end"
        );
    }
}
