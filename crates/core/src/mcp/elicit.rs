//! A server's forms (`elicitation/create`): routed to the call in flight, put to the user
//! by whoever that call was given ([`AskUser`]), answered back.
//!
//! A call that can ask the user registers a [`FormRoute`] for as long as it runs
//! ([`register`]); the route ends with the call (its result, a timeout, the user's
//! interrupt), and so does any form open through it: the user's form closes and the
//! server is answered `cancel`. A form arrives over the server's connection, not tied to a
//! call, so it goes to the server's most recent call that can ask; with none (no call
//! runs, a subagent's call, print mode without a person) it is declined. The schema is
//! read by [`Form::from_schema`]; one rein cannot show (a nested object, an array, more
//! than 1,000 fields) is declined and the user told why. A URL-mode request is declined
//! (rein declares forms only). The server's own cancel (`notifications/cancelled`) closes
//! the form too.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
use tokio::sync::watch;

use crate::elicitation::{Form, FormAnswer};
use crate::tools::external::AskUser;

/// The calls in flight on one connection that can put a form to the user, oldest first.
pub(super) type FormRoutes = Arc<Mutex<Vec<FormRoute>>>;

/// One call's way to the user.
pub(super) struct FormRoute {
    call: u64,
    ask: Arc<dyn AskUser>,
    /// Closed when the call ends.
    ended: watch::Receiver<()>,
}

/// The route of a running call: dropping it (the call ended) removes the route and
/// closes a form open through it.
pub(super) struct RouteGuard {
    routes: FormRoutes,
    call: u64,
    _alive: watch::Sender<()>,
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        let mut routes = self.routes.lock().unwrap_or_else(|e| e.into_inner());
        routes.retain(|r| r.call != self.call);
    }
}

/// Who a call asks, watched: `open` counts its forms open now (the call's clock stops
/// while one is).
pub(super) struct Watched {
    inner: Arc<dyn AskUser>,
    open: watch::Sender<usize>,
}

impl Watched {
    pub(super) fn new(inner: Arc<dyn AskUser>, open: watch::Sender<usize>) -> Watched {
        Watched { inner, open }
    }
}

/// One open form of a [`Watched`] call: counted down when its wait ends or is dropped.
struct OpenForm(watch::Sender<usize>);

impl Drop for OpenForm {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl AskUser for Watched {
    fn ask(&self, form: Form) -> crate::tools::external::FormWait {
        self.open.send_modify(|n| *n += 1);
        let open = OpenForm(self.open.clone());
        let wait = self.inner.ask(form);
        Box::pin(async move {
            let _open = open;
            wait.await
        })
    }

    fn tell(&self, message: String) {
        self.inner.tell(message);
    }
}

/// Register a running call's way to the user on its connection's `routes`.
pub(super) fn register(routes: &FormRoutes, ask: Arc<dyn AskUser>) -> RouteGuard {
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let call = CALLS.fetch_add(1, Ordering::Relaxed);
    let (alive, ended) = watch::channel(());
    routes
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(FormRoute { call, ask, ended });
    RouteGuard {
        routes: routes.clone(),
        call,
        _alive: alive,
    }
}

/// The answer to `server`'s `elicitation/create` with `params`: the user's, through the
/// newest call on `routes` that can ask; `cancel` when that call ends or `server_gave_up`
/// completes (the server cancelled its request) first.
pub(super) async fn answer(
    server: &str,
    routes: &FormRoutes,
    params: ElicitRequestParams,
    server_gave_up: impl Future<Output = ()>,
) -> ElicitResult {
    let route = {
        let routes = routes.lock().unwrap_or_else(|e| e.into_inner());
        routes.last().map(|r| (r.ask.clone(), r.ended.clone()))
    };
    let Some((ask, mut ended)) = route else {
        return ElicitResult::new(ElicitationAction::Decline);
    };
    let ElicitRequestParams::FormElicitationParams {
        message,
        requested_schema,
        ..
    } = params
    else {
        ask.tell(format!(
            "the MCP server {server:?} asked you to open a web page; rein does not offer that, \
             and declined"
        ));
        return ElicitResult::new(ElicitationAction::Decline);
    };
    let order = requested_schema.property_order.clone();
    let form = serde_json::to_value(&requested_schema)
        .map_err(|e| e.to_string())
        .and_then(|schema| Form::from_schema(server, &message, &schema, order.as_deref()));
    let form = match form {
        Ok(form) => form,
        Err(why) => {
            ask.tell(format!(
                "the MCP server {server:?} asked for a form rein cannot show ({why}); rein \
                 declined it"
            ));
            return ElicitResult::new(ElicitationAction::Decline);
        }
    };
    let answer = tokio::select! {
        answer = ask.ask(form) => answer,
        _ = ended.changed() => FormAnswer::Cancel,
        () = server_gave_up => FormAnswer::Cancel,
    };
    match answer {
        FormAnswer::Accept(content) => ElicitResult::new(ElicitationAction::Accept)
            .with_content(serde_json::Value::Object(content)),
        FormAnswer::Decline => ElicitResult::new(ElicitationAction::Decline),
        FormAnswer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
    }
}
